// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";

/// @notice One ERC-721 token per agent. The token owner is the agent's owner and receives the
/// owner share of every payout; the token also carries the agent's self wallet, its service
/// wallet id (`agl_` + 12 lowercase hex), its referrer, a sale pause flag and lifetime earnings.
contract AgentRegistry is ERC721, AccessControl, Pausable {
    bytes32 public constant REGISTRAR_ROLE = keccak256("REGISTRAR_ROLE");
    bytes32 public constant EARNINGS_ROLE = keccak256("EARNINGS_ROLE");
    bytes32 public constant MARKET_ROLE = keccak256("MARKET_ROLE");
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

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

    constructor(address admin) ERC721("agentledger Agent", "AGENT") {
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

    /// @notice The token owner rotates the agent's self wallet (e.g. after buying the agent).
    function setSelfWallet(uint256 tokenId, address newSelfWallet) external whenNotPaused {
        if (_requireOwned(tokenId) != msg.sender) revert NotTokenOwner(tokenId, msg.sender);
        Agent storage a = _agents[tokenId];
        if (a.paused) revert AgentIsPaused(tokenId);
        if (newSelfWallet == address(0)) revert ZeroAddress();
        if (tokenOfSelfWallet[newSelfWallet] != 0) revert SelfWalletTaken(newSelfWallet);
        address previous = a.selfWallet;
        delete tokenOfSelfWallet[previous];
        tokenOfSelfWallet[newSelfWallet] = tokenId;
        a.selfWallet = newSelfWallet;
        emit SelfWalletChanged(tokenId, previous, newSelfWallet);
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

    /// @dev A paused (listed) agent moves only by the marketplace, which escrows it.
    function _update(address to, uint256 tokenId, address auth) internal override returns (address) {
        if (_agents[tokenId].paused && !hasRole(MARKET_ROLE, msg.sender)) revert AgentIsPaused(tokenId);
        return super._update(to, tokenId, auth);
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
