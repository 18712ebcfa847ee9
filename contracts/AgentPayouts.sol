// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {AgentRegistry} from "./AgentRegistry.sol";
import {CreditFallback} from "./CreditFallback.sol";

/// @notice The protocol earn path used by both escrows. Of an amount A:
///   agentCut    = floor(A * 1%)                 -> the agent's self wallet
///   referralCut = floor(A * 0.5%) if referred   -> the referrer's owner (taken from the owner share)
///   ownerCut    = floor(A * 97%) - referralCut  -> the token owner
///   serviceCut  = A - ownerCut - agentCut - referralCut (2% plus rounding dust) -> the treasury
/// The four parts always sum exactly to A. A payee that cannot receive gets a withdrawable credit.
/// An agent whose self wallet was reset (it changed hands, the new owner has not set one) is not
/// paid: `pay` reverts with AgentRegistry.NoSelfWallet until a self wallet is set.
contract AgentPayouts is AccessControl, Pausable, CreditFallback {
    using SafeERC20 for IERC20;

    bytes32 public constant PAYER_ROLE = keccak256("PAYER_ROLE");
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    uint256 public constant BPS = 10_000;
    uint256 public constant OWNER_BPS = 9_700;
    uint256 public constant AGENT_BPS = 100;
    uint256 public constant REFERRAL_BPS = 50;

    AgentRegistry public immutable registry;
    address public treasury;

    event Payout(
        bytes32 indexed ref,
        uint256 indexed tokenId,
        address indexed payer,
        uint256 amount,
        uint256 ownerCut,
        uint256 agentCut,
        uint256 serviceCut,
        uint256 referralCut,
        address owner,
        address selfWallet,
        address referrer
    );
    event TreasuryChanged(address indexed previous, address indexed current);

    error ZeroAmount();

    constructor(IERC20 usdc_, AgentRegistry registry_, address treasury_, address admin) CreditFallback(usdc_) {
        if (address(registry_) == address(0) || treasury_ == address(0) || admin == address(0)) revert ZeroAddress();
        registry = registry_;
        treasury = treasury_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @notice The split rule; `referred` says whether the agent has a referrer.
    function split(uint256 amount, bool referred)
        public
        pure
        returns (uint256 ownerCut, uint256 agentCut, uint256 serviceCut, uint256 referralCut)
    {
        agentCut = (amount * AGENT_BPS) / BPS;
        referralCut = referred ? (amount * REFERRAL_BPS) / BPS : 0;
        ownerCut = (amount * OWNER_BPS) / BPS - referralCut;
        serviceCut = amount - ownerCut - agentCut - referralCut;
    }

    /// @notice Pull `amount` USDC from the calling escrow and split it for agent `tokenId`.
    /// `ref` is the caller's job id, echoed in the event for the indexer.
    function pay(uint256 tokenId, uint256 amount, bytes32 ref)
        external
        onlyRole(PAYER_ROLE)
        whenNotPaused
        nonReentrant
    {
        if (amount == 0) revert ZeroAmount();
        address owner = registry.ownerPayee(tokenId);
        address selfWallet = registry.requireSelfWallet(tokenId); // reset after a change of hands: no payout
        address referrer = registry.referralPayee(tokenId);
        (uint256 ownerCut, uint256 agentCut, uint256 serviceCut, uint256 referralCut) =
            split(amount, referrer != address(0));

        usdc.safeTransferFrom(msg.sender, address(this), amount);
        registry.recordEarnings(tokenId, amount);
        emit Payout(ref, tokenId, msg.sender, amount, ownerCut, agentCut, serviceCut, referralCut, owner, selfWallet, referrer);

        _payOrCredit(owner, ownerCut);
        _payOrCredit(selfWallet, agentCut);
        _payOrCredit(referrer, referralCut);
        _payOrCredit(treasury, serviceCut);
    }

    function setTreasury(address treasury_) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (treasury_ == address(0)) revert ZeroAddress();
        emit TreasuryChanged(treasury, treasury_);
        treasury = treasury_;
    }

    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }
}
