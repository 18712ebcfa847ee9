// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {AgentRegistry} from "./AgentRegistry.sol";
import {AgentPayouts} from "./AgentPayouts.sol";
import {CreditFallback} from "./CreditFallback.sol";

/// @notice Agent-to-agent hire. The provider publishes a price and an SLA (how long a job may
/// take); the hiring agent locks USDC for a provider named by its service wallet id, at exactly
/// the provider's published price and SLA. A job expires SLA + SETTLEMENT_GRACE after creation.
/// Until then the oracle releases it through the payout path or refunds it; after it anyone may
/// reclaim it, and the USDC always goes back to the job's caller.
///
/// Time rule (no race between release and reclaim): release and refund need
/// block.timestamp <= expiresAt, reclaim needs block.timestamp > expiresAt.
contract AgentEscrow is AccessControl, Pausable, CreditFallback {
    using SafeERC20 for IERC20;

    bytes32 public constant ORACLE_ROLE = keccak256("ORACLE_ROLE");
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    /// @notice Bounds of a provider's SLA; an SLA given as 0 means DEFAULT_SLA.
    uint64 public constant MIN_SLA = 1 hours;
    uint64 public constant MAX_SLA = 90 days;
    uint64 public constant DEFAULT_SLA = 7 days;
    /// @notice Added to the SLA for the oracle's release (sent when the work is delivered at the
    /// end of the SLA) to be mined before the job becomes reclaimable.
    uint64 public constant SETTLEMENT_GRACE = 1 hours;

    enum Status {
        NotFound,
        Locked,
        Released,
        Refunded
    }

    struct Job {
        address caller;
        uint64 expiresAt;
        Status status;
        uint256 providerTokenId;
        uint256 amount;
    }

    AgentRegistry public immutable registry;
    AgentPayouts public immutable payouts;

    mapping(bytes32 => Job) private _jobs;
    /// @notice The price a provider charges per hire, set by its owner or self wallet.
    mapping(uint256 => uint256) public priceOf;
    /// @notice Seconds a provider's job may take (its SLA), published with its price; 0 when not for hire.
    mapping(uint256 => uint64) public slaOf;
    /// @notice USDC held for locked jobs.
    uint256 public totalLocked;

    event PriceSet(uint256 indexed tokenId, uint256 price, uint64 slaSeconds, address setter);
    event JobCreated(
        bytes32 indexed jobId, address indexed caller, uint256 indexed providerTokenId, uint256 amount, uint64 expiresAt
    );
    event JobReleased(bytes32 indexed jobId, uint256 indexed providerTokenId, uint256 amount, address oracle);
    event JobRefunded(bytes32 indexed jobId, address indexed caller, uint256 amount, address by);

    error JobExists(bytes32 jobId);
    error UnknownJob(bytes32 jobId);
    error NotLocked(bytes32 jobId, Status status);
    error PriceMismatch(uint256 expected, uint256 offered);
    error NoPrice(uint256 tokenId);
    error NotProviderController(uint256 tokenId, address caller);
    error NotExpired(bytes32 jobId, uint64 expiresAt);
    error Expired(bytes32 jobId, uint64 expiresAt);
    error AgentPaused(uint256 tokenId);
    error BadSla(uint64 slaSeconds);
    error SlaMismatch(uint64 expected, uint64 offered);
    error NoSelfWallet(uint256 tokenId);

    constructor(IERC20 usdc_, AgentRegistry registry_, AgentPayouts payouts_, address admin) CreditFallback(usdc_) {
        if (address(registry_) == address(0) || address(payouts_) == address(0) || admin == address(0)) {
            revert ZeroAddress();
        }
        registry = registry_;
        payouts = payouts_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @notice The provider's owner or self wallet publishes its hire price (0 = not for hire) and
    /// its SLA in seconds (0 = DEFAULT_SLA; else within MIN_SLA..MAX_SLA). Jobs already created
    /// keep the expiry they were created with.
    function setPrice(uint256 tokenId, uint256 price, uint64 slaSeconds) external {
        if (msg.sender != registry.ownerOf(tokenId) && msg.sender != registry.selfWalletOf(tokenId)) {
            revert NotProviderController(tokenId, msg.sender);
        }
        if (price == 0) {
            slaSeconds = 0;
        } else {
            if (slaSeconds == 0) slaSeconds = DEFAULT_SLA;
            if (slaSeconds < MIN_SLA || slaSeconds > MAX_SLA) revert BadSla(slaSeconds);
        }
        priceOf[tokenId] = price;
        slaOf[tokenId] = slaSeconds;
        emit PriceSet(tokenId, price, slaSeconds, msg.sender);
    }

    /// @notice Lock `amount` of the caller's approved USDC to hire `providerWallet`. `amount` and
    /// `slaSeconds` are the price and SLA the caller expects and must equal the published ones
    /// (the SLA says how long the caller's USDC can stay locked).
    function createJob(bytes32 jobId, string calldata providerWallet, uint256 amount, uint64 slaSeconds)
        external
        whenNotPaused
        nonReentrant
    {
        if (_jobs[jobId].status != Status.NotFound) revert JobExists(jobId);
        uint256 tokenId = registry.tokenOfWalletId(providerWallet);
        uint256 price = priceOf[tokenId];
        if (price == 0) revert NoPrice(tokenId);
        if (amount != price) revert PriceMismatch(price, amount);
        uint64 sla = slaOf[tokenId];
        if (slaSeconds != sla) revert SlaMismatch(sla, slaSeconds);
        if (registry.isAgentPaused(tokenId)) revert AgentPaused(tokenId);
        if (registry.selfWalletOf(tokenId) == address(0)) revert NoSelfWallet(tokenId); // a release could not pay it

        uint64 expiresAt = uint64(block.timestamp) + sla + SETTLEMENT_GRACE;
        _jobs[jobId] = Job(msg.sender, expiresAt, Status.Locked, tokenId, amount);
        totalLocked += amount;
        emit JobCreated(jobId, msg.sender, tokenId, amount, expiresAt);
        usdc.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @notice The oracle confirms delivery, until the job expires: pay the provider through the payout path.
    function release(bytes32 jobId) external onlyRole(ORACLE_ROLE) whenNotPaused nonReentrant {
        Job storage job = _unexpired(jobId);
        uint256 amount = job.amount;
        job.status = Status.Released;
        totalLocked -= amount;
        emit JobReleased(jobId, job.providerTokenId, amount, msg.sender);
        usdc.forceApprove(address(payouts), amount);
        payouts.pay(job.providerTokenId, amount, jobId);
    }

    /// @notice The oracle refunds the caller (e.g. the provider failed), until the job expires.
    function refund(bytes32 jobId) external onlyRole(ORACLE_ROLE) nonReentrant {
        _refund(_unexpired(jobId), jobId);
    }

    /// @notice Anyone refunds an expired job nobody acted on; the USDC goes to the job's caller.
    function reclaim(bytes32 jobId) external nonReentrant {
        Job storage job = _locked(jobId);
        if (block.timestamp <= job.expiresAt) revert NotExpired(jobId, job.expiresAt);
        _refund(job, jobId);
    }

    /// @notice status is one of "locked", "released", "refunded", "not_found".
    function jobStatus(bytes32 jobId)
        external
        view
        returns (string memory status, address caller, uint256 amount, bool released, bool refunded)
    {
        Job storage job = _jobs[jobId];
        Status s = job.status;
        if (s == Status.NotFound) return ("not_found", address(0), 0, false, false);
        status = s == Status.Locked ? "locked" : s == Status.Released ? "released" : "refunded";
        return (status, job.caller, job.amount, s == Status.Released, s == Status.Refunded);
    }

    function getJob(bytes32 jobId) external view returns (Job memory) {
        return _jobs[jobId];
    }

    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    function _locked(bytes32 jobId) private view returns (Job storage job) {
        job = _jobs[jobId];
        if (job.status == Status.NotFound) revert UnknownJob(jobId);
        if (job.status != Status.Locked) revert NotLocked(jobId, job.status);
    }

    function _unexpired(bytes32 jobId) private view returns (Job storage job) {
        job = _locked(jobId);
        if (block.timestamp > job.expiresAt) revert Expired(jobId, job.expiresAt);
    }

    function _refund(Job storage job, bytes32 jobId) private {
        uint256 amount = job.amount;
        job.status = Status.Refunded;
        totalLocked -= amount;
        emit JobRefunded(jobId, job.caller, amount, msg.sender);
        _payOrCredit(job.caller, amount);
    }
}
