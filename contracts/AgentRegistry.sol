// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/// @notice One ERC-721 token per agent. The token owner is the agent's owner and receives the
/// owner share of every payout; the token also carries the agent's self wallet, its service
/// wallet id (`agl_` + 12 lowercase hex), its referrer, a sale pause flag and lifetime earnings.
///
/// The self wallet follows ownership: when the token changes hands (a direct transfer, or a
/// marketplace sale settled to its buyer) it is reset to zero until the new owner sets one, and
/// setting one needs an EIP-712 proof signed by the new self wallet itself (an EOA or an ERC-1271
/// contract wallet), so nobody can point an agent at an address it does not control. The
/// marketplace's escrow of a listed token (in on list, back to the seller on cancel or expiry) is
/// not a change of hands and keeps it. While it is zero, everything keyed on it fails closed
/// (`requireSelfWallet` reverts: no attestation, no payout, no new job).
contract AgentRegistry is ERC721, AccessControl, Pausable, EIP712 {
    bytes32 public constant REGISTRAR_ROLE = keccak256("REGISTRAR_ROLE");
    bytes32 public constant EARNINGS_ROLE = keccak256("EARNINGS_ROLE");
    bytes32 public constant MARKET_ROLE = keccak256("MARKET_ROLE");
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    /// @notice What a new self wallet signs to accept the role for `tokenId` under `owner`;
    /// `nonce` is selfWalletNonce(tokenId), which every change of the self wallet advances.
    bytes32 public constant SELF_WALLET_TYPEHASH =
        keccak256("SelfWallet(uint256 tokenId,address selfWallet,address owner,uint256 nonce,uint256 deadline)");

    struct Agent {
        address selfWallet;
        uint256 referrerTokenId; // 0 = no referrer
        uint256 lifetimeEarnings; // gross USDC units paid through the payout path
        address sellerWhilePaused; // owner of record while the token is escrowed for sale
        bool paused;
        string walletId;
    }

    uint256 public totalAgents;
    mapping(uint256 => Agent) private _agents;
    mapping(bytes32 => uint256) private _tokenOfWalletId; // keccak256(walletId) => tokenId
    mapping(address => uint256) public tokenOfSelfWallet;
    /// @notice Advanced by every change of the token's self wallet (set or reset): a proof names it,
    /// so a proof is good for one change only.
    mapping(uint256 => uint256) public selfWalletNonce;
    /// @dev Who sent a token into a MARKET_ROLE holder's escrow: its return to that address is not
    /// a change of hands.
    mapping(uint256 => address) private _escrowedFrom;

    event AgentRegistered(
        uint256 indexed tokenId,
        address indexed owner,
        address indexed selfWallet,
        string walletId,
        uint256 referrerTokenId
    );
    event SelfWalletChanged(uint256 indexed tokenId, address indexed previous, address indexed current);
    event AgentPauseChanged(uint256 indexed tokenId, bool paused, address seller);
    event EarningsRecorded(uint256 indexed tokenId, uint256 amount, uint256 lifetimeEarnings);

    error InvalidWalletId(string walletId);
    error WalletIdTaken(string walletId);
    error SelfWalletTaken(address selfWallet);
    error UnknownAgent(uint256 tokenId);
    error UnknownWalletId(string walletId);
    error NotTokenOwner(uint256 tokenId, address caller);
    error AgentIsPaused(uint256 tokenId);
    error ZeroAddress();
    error NoSelfWallet(uint256 tokenId);
    error ProofExpired(uint256 deadline);
    error BadSelfWalletProof(uint256 tokenId, address selfWallet);

    constructor(address admin) ERC721("agentledger Agent", "AGENT") EIP712("agentledger AgentRegistry", "1") {
        if (admin == address(0)) revert ZeroAddress();
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    // ---- registration -------------------------------------------------------------------

    function mint(address owner, address selfWallet, string calldata walletId, uint256 referrerTokenId)
        external
        onlyRole(REGISTRAR_ROLE)
        whenNotPaused
        returns (uint256 tokenId)
    {
        if (owner == address(0) || selfWallet == address(0)) revert ZeroAddress();
        if (!_isWalletId(bytes(walletId))) revert InvalidWalletId(walletId);
        bytes32 key = keccak256(bytes(walletId));
        if (_tokenOfWalletId[key] != 0) revert WalletIdTaken(walletId);
        if (tokenOfSelfWallet[selfWallet] != 0) revert SelfWalletTaken(selfWallet);
        if (referrerTokenId != 0 && _ownerOf(referrerTokenId) == address(0)) revert UnknownAgent(referrerTokenId);

        tokenId = ++totalAgents;
        Agent storage a = _agents[tokenId];
        a.selfWallet = selfWallet;
        a.referrerTokenId = referrerTokenId;
        a.walletId = walletId;
        _tokenOfWalletId[key] = tokenId;
        tokenOfSelfWallet[selfWallet] = tokenId;
        emit AgentRegistered(tokenId, owner, selfWallet, walletId, referrerTokenId);
        _mint(owner, tokenId); // not _safeMint: no receiver callback during registration
    }

    /// @notice The token owner sets the agent's self wallet (e.g. after buying the agent), with
    /// `signature`: the new wallet's EIP-712 signature of SelfWallet(tokenId, newSelfWallet, owner,
    /// selfWalletNonce(tokenId), deadline), valid until `deadline` (an ERC-1271 wallet's
    /// isValidSignature counts too).
    function setSelfWallet(uint256 tokenId, address newSelfWallet, uint256 deadline, bytes calldata signature)
        external
        whenNotPaused
    {
        address owner = _requireOwned(tokenId);
        if (owner != msg.sender) revert NotTokenOwner(tokenId, msg.sender);
        Agent storage a = _agents[tokenId];
        if (a.paused) revert AgentIsPaused(tokenId);
        if (newSelfWallet == address(0)) revert ZeroAddress();
        if (tokenOfSelfWallet[newSelfWallet] != 0) revert SelfWalletTaken(newSelfWallet);
        if (block.timestamp > deadline) revert ProofExpired(deadline);
        bytes32 digest = selfWalletDigest(tokenId, newSelfWallet, owner, selfWalletNonce[tokenId], deadline);
        if (!SignatureChecker.isValidSignatureNow(newSelfWallet, digest, signature)) {
            revert BadSelfWalletProof(tokenId, newSelfWallet);
        }
        address previous = a.selfWallet;
        if (previous != address(0)) delete tokenOfSelfWallet[previous];
        tokenOfSelfWallet[newSelfWallet] = tokenId;
        a.selfWallet = newSelfWallet;
        ++selfWalletNonce[tokenId];
        emit SelfWalletChanged(tokenId, previous, newSelfWallet);
    }

    /// @notice The EIP-712 digest a new self wallet signs (domain "agentledger AgentRegistry", "1").
    function selfWalletDigest(uint256 tokenId, address selfWallet, address owner, uint256 nonce, uint256 deadline)
        public
        view
        returns (bytes32)
    {
        return _hashTypedDataV4(keccak256(abi.encode(SELF_WALLET_TYPEHASH, tokenId, selfWallet, owner, nonce, deadline)));
    }

    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    // ---- protocol hooks -----------------------------------------------------------------

    /// @notice Called by the payout path after it has split `amount` for this agent.
    function recordEarnings(uint256 tokenId, uint256 amount) external onlyRole(EARNINGS_ROLE) {
        _requireOwned(tokenId);
        Agent storage a = _agents[tokenId];
        a.lifetimeEarnings += amount;
        emit EarningsRecorded(tokenId, amount, a.lifetimeEarnings);
    }

    /// @notice The marketplace pauses an agent while it is listed; `seller` keeps receiving
    /// the owner share while the token sits in escrow. Pausing needs a real seller: with none,
    /// every owner share would be credited to address(0), where nobody can ever withdraw it.
    function setSalePause(uint256 tokenId, bool paused_, address seller) external onlyRole(MARKET_ROLE) {
        _requireOwned(tokenId);
        if (paused_ && seller == address(0)) revert ZeroAddress();
        Agent storage a = _agents[tokenId];
        a.paused = paused_;
        a.sellerWhilePaused = paused_ ? seller : address(0);
        emit AgentPauseChanged(tokenId, paused_, a.sellerWhilePaused);
    }

    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    // ---- views --------------------------------------------------------------------------

    function agent(uint256 tokenId) external view returns (Agent memory) {
        _requireOwned(tokenId);
        return _agents[tokenId];
    }

    function selfWalletOf(uint256 tokenId) external view returns (address) {
        _requireOwned(tokenId);
        return _agents[tokenId].selfWallet;
    }

    /// @notice The self wallet, or a NoSelfWallet revert while it is reset (after a change of
    /// hands): what attestations and payouts use, so they fail closed.
    function requireSelfWallet(uint256 tokenId) external view returns (address selfWallet) {
        _requireOwned(tokenId);
        selfWallet = _agents[tokenId].selfWallet;
        if (selfWallet == address(0)) revert NoSelfWallet(tokenId);
    }

    function isAgentPaused(uint256 tokenId) external view returns (bool) {
        _requireOwned(tokenId);
        return _agents[tokenId].paused;
    }

    function lifetimeEarningsOf(uint256 tokenId) external view returns (uint256) {
        _requireOwned(tokenId);
        return _agents[tokenId].lifetimeEarnings;
    }

    function tokenOfWalletId(string calldata walletId) external view returns (uint256 tokenId) {
        tokenId = _tokenOfWalletId[keccak256(bytes(walletId))];
        if (tokenId == 0) revert UnknownWalletId(walletId);
    }

    /// @notice Who receives the owner share: the token owner, or the seller while listed.
    function ownerPayee(uint256 tokenId) public view returns (address) {
        address owner = _requireOwned(tokenId);
        Agent storage a = _agents[tokenId];
        return a.paused ? a.sellerWhilePaused : owner;
    }

    /// @notice Who receives the referral share: the owner payee of the referrer, or nobody.
    function referralPayee(uint256 tokenId) external view returns (address) {
        _requireOwned(tokenId);
        uint256 ref = _agents[tokenId].referrerTokenId;
        return ref == 0 ? address(0) : ownerPayee(ref);
    }

    function supportsInterface(bytes4 interfaceId) public view override(ERC721, AccessControl) returns (bool) {
        return super.supportsInterface(interfaceId);
    }

    // ---- internals ----------------------------------------------------------------------

    /// @dev A paused (listed) agent moves only by the marketplace, which escrows it. A change of
    /// hands resets the self wallet; the marketplace's escrow (into a MARKET_ROLE holder, and back
    /// out to the address it came from) is not one.
    function _update(address to, uint256 tokenId, address auth) internal override returns (address from) {
        if (_agents[tokenId].paused && !hasRole(MARKET_ROLE, msg.sender)) revert AgentIsPaused(tokenId);
        from = super._update(to, tokenId, auth);
        if (from == address(0) || from == to) return from; // a mint, or no move
        if (hasRole(MARKET_ROLE, to)) {
            _escrowedFrom[tokenId] = from;
            return from;
        }
        if (hasRole(MARKET_ROLE, from)) {
            address seller = _escrowedFrom[tokenId];
            delete _escrowedFrom[tokenId];
            if (to == seller) return from;
        }
        _resetSelfWallet(tokenId);
    }

    function _resetSelfWallet(uint256 tokenId) private {
        Agent storage a = _agents[tokenId];
        address previous = a.selfWallet;
        if (previous == address(0)) return;
        delete tokenOfSelfWallet[previous];
        a.selfWallet = address(0);
        ++selfWalletNonce[tokenId];
        emit SelfWalletChanged(tokenId, previous, address(0));
    }

    /// @dev `agl_` followed by exactly 12 lowercase hex digits.
    function _isWalletId(bytes memory s) private pure returns (bool) {
        if (s.length != 16 || s[0] != "a" || s[1] != "g" || s[2] != "l" || s[3] != "_") return false;
        for (uint256 i = 4; i < 16; ++i) {
            bytes1 c = s[i];
            if (!((c >= "0" && c <= "9") || (c >= "a" && c <= "f"))) return false;
        }
        return true;
    }
}
