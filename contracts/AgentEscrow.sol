// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {AgentRegistry} from "./AgentRegistry.sol";
import {AgentPayouts} from "./AgentPayouts.sol";
import {CreditFallback} from "./CreditFallback.sol";

/// @notice Agent-to-agent hire. The hiring agent locks USDC for a provider named by its
/// service wallet id, at exactly the provider's published price; an oracle releases it through
/// the payout path or refunds it; the caller can reclaim after the job's expiry.
contract AgentEscrow is AccessControl, Pausable, CreditFallback {
    using SafeERC20 for IERC20;

    bytes32 public constant ORACLE_ROLE = keccak256("ORACLE_ROLE");
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    uint64 public constant MIN_JOB_TTL = 1 hours;
    uint64 public constant MAX_JOB_TTL = 90 days;

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
    uint64 public jobTtl;

    mapping(bytes32 => Job) private _jobs;
    /// @notice The price a provider charges per hire, set by its owner or self wallet.
    mapping(uint256 => uint256) public priceOf;
    /// @notice USDC held for locked jobs.
    uint256 public totalLocked;

    event PriceSet(uint256 indexed tokenId, uint256 price, address setter);
    event JobCreated(
        bytes32 indexed jobId, address indexed caller, uint256 indexed providerTokenId, uint256 amount, uint64 expiresAt
    );
    event JobReleased(bytes32 indexed jobId, uint256 indexed providerTokenId, uint256 amount, address oracle);
    event JobRefunded(bytes32 indexed jobId, address indexed caller, uint256 amount, address by);
    event JobTtlChanged(uint64 previous, uint64 current);

    error JobExists(bytes32 jobId);
    error UnknownJob(bytes32 jobId);
    error NotLocked(bytes32 jobId, Status status);
    error PriceMismatch(uint256 expected, uint256 offered);
    error NoPrice(uint256 tokenId);
    error NotProviderController(uint256 tokenId, address caller);
    error NotCaller(bytes32 jobId, address caller);
    error NotExpired(bytes32 jobId, uint64 expiresAt);
    error AgentPaused(uint256 tokenId);
    error BadTtl(uint64 ttl);

    constructor(IERC20 usdc_, AgentRegistry registry_, AgentPayouts payouts_, address admin, uint64 jobTtl_)
        CreditFallback(usdc_)
    {
        if (address(registry_) == address(0) || address(payouts_) == address(0) || admin == address(0)) {
            revert ZeroAddress();
        }
        if (jobTtl_ < MIN_JOB_TTL || jobTtl_ > MAX_JOB_TTL) revert BadTtl(jobTtl_);
        registry = registry_;
        payouts = payouts_;
        jobTtl = jobTtl_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    /// @notice The provider's owner or self wallet publishes its hire price (0 = not for hire).
    function setPrice(uint256 tokenId, uint256 price) external {
        if (msg.sender != registry.ownerOf(tokenId) && msg.sender != registry.selfWalletOf(tokenId)) {
            revert NotProviderController(tokenId, msg.sender);
        }
        priceOf[tokenId] = price;
        emit PriceSet(tokenId, price, msg.sender);
    }

    /// @notice Lock `amount` of the caller's approved USDC to hire `providerWallet`.
    /// `amount` is the price the caller expects and must equal the published price.
    function createJob(bytes32 jobId, string calldata providerWallet, uint256 amount)
        external
        whenNotPaused
        nonReentrant
    {
        if (_jobs[jobId].status != Status.NotFound) revert JobExists(jobId);
        uint256 tokenId = registry.tokenOfWalletId(providerWallet);
        uint256 price = priceOf[tokenId];
        if (price == 0) revert NoPrice(tokenId);
        if (amount != price) revert PriceMismatch(price, amount);
        if (registry.isAgentPaused(tokenId)) revert AgentPaused(tokenId);

        uint64 expiresAt = uint64(block.timestamp) + jobTtl;
        _jobs[jobId] = Job(msg.sender, expiresAt, Status.Locked, tokenId, amount);
        totalLocked += amount;
        emit JobCreated(jobId, msg.sender, tokenId, amount, expiresAt);
        usdc.safeTransferFrom(msg.sender, address(this), amount);
    }

    /// @notice The oracle confirms delivery: pay the provider through the payout path.
    function release(bytes32 jobId) external onlyRole(ORACLE_ROLE) whenNotPaused nonReentrant {
        Job storage job = _locked(jobId);
        uint256 amount = job.amount;
        job.status = Status.Released;
        totalLocked -= amount;
        emit JobReleased(jobId, job.providerTokenId, amount, msg.sender);
        usdc.forceApprove(address(payouts), amount);
        payouts.pay(job.providerTokenId, amount, jobId);
    }

    /// @notice The oracle refunds the caller (e.g. the provider failed).
    function refund(bytes32 jobId) external onlyRole(ORACLE_ROLE) nonReentrant {
        _refund(_locked(jobId), jobId);
    }

    /// @notice The caller takes the funds back after expiry if the oracle never acted.
    function reclaim(bytes32 jobId) external nonReentrant {
        Job storage job = _locked(jobId);
        if (msg.sender != job.caller) revert NotCaller(jobId, msg.sender);
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

    function setJobTtl(uint64 ttl) external onlyRole(DEFAULT_ADMIN_ROLE) {
        if (ttl < MIN_JOB_TTL || ttl > MAX_JOB_TTL) revert BadTtl(ttl);
        emit JobTtlChanged(jobTtl, ttl);
        jobTtl = ttl;
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

    function _refund(Job storage job, bytes32 jobId) private {
        uint256 amount = job.amount;
        job.status = Status.Refunded;
        totalLocked -= amount;
        emit JobRefunded(jobId, job.caller, amount, msg.sender);
        _payOrCredit(job.caller, amount);
    }
}
