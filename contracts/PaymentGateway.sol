// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {AgentRegistry} from "./AgentRegistry.sol";
import {AgentPayouts} from "./AgentPayouts.sol";
import {CreditFallback} from "./CreditFallback.sol";

/// @notice Buyer-funded checkout escrow. The operator funds a job from the buyer's
/// pre-approved USDC, but only with the buyer's EIP-712 consent to exactly that job (job id,
/// provider, amount and work deadline; an ERC-1271 contract wallet consents through
/// isValidSignature), so the operator key alone cannot move anyone's allowance; the provider's
/// EIP-191 attestation releases it through the payout path (anyone may submit it, so funds
/// never depend on the operator); the buyer may dispute before release or reclaim after the
/// work deadline; an arbiter resolves disputes.
///
/// Time rule (no race between release and reclaim): release needs block.timestamp <= deadline,
/// reclaim needs block.timestamp > deadline.
contract PaymentGateway is AccessControl, Pausable, EIP712, CreditFallback {
    using SafeERC20 for IERC20;

    bytes32 public constant OPERATOR_ROLE = keccak256("OPERATOR_ROLE");
    bytes32 public constant ARBITER_ROLE = keccak256("ARBITER_ROLE");
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    /// @notice The buyer's consent to one funding (domain "agentledger PaymentGateway", "1").
    /// A job id is funded at most once, so a consent is good for one funding only.
    bytes32 public constant FUNDING_TYPEHASH =
        keccak256("Funding(bytes32 jobId,address buyer,uint256 providerTokenId,uint256 amount,uint64 deadline)");

    enum Status {
        None,
        Funded,
        Disputed,
        Released,
        Refunded,
        Resolved
    }

    struct Job {
        address buyer;
        uint64 deadline;
        Status status;
        uint256 providerTokenId;
        uint256 amount;
    }

    AgentRegistry public immutable registry;
    AgentPayouts public immutable payouts;

    mapping(bytes32 => Job) private _jobs;
    /// @notice USDC held for jobs still funded or disputed (what this contract owes, with credits).
    uint256 public totalEscrowed;

    event JobFunded(
        bytes32 indexed jobId, address indexed buyer, uint256 indexed providerTokenId, uint256 amount, uint64 deadline
    );
    event JobReleased(
        bytes32 indexed jobId, uint256 indexed providerTokenId, uint256 amount, string cid, uint256 attestedAt, address submitter
    );
    event DisputeOpened(bytes32 indexed jobId, address indexed buyer);
    event DisputeResolved(bytes32 indexed jobId, uint256 providerAmount, uint256 buyerAmount, address arbiter);
    event JobReclaimed(bytes32 indexed jobId, address indexed buyer, uint256 amount);

    error JobExists(bytes32 jobId);
    error UnknownJob(bytes32 jobId);
    error WrongStatus(bytes32 jobId, Status status);
    error ZeroAmount();
    error DeadlineInPast(uint64 deadline);
    error DeadlineNotPassed(bytes32 jobId, uint64 deadline);
    error DeadlinePassed(bytes32 jobId, uint64 deadline);
    error AgentPaused(uint256 tokenId);
    error BadAttestation(bytes32 jobId, address signer, address expected);
    error NotBuyer(bytes32 jobId, address caller);
    error SplitTooLarge(uint256 providerAmount, uint256 amount);
    error BadBuyerSignature(bytes32 jobId, address buyer);
    error NoSelfWallet(uint256 tokenId);

    constructor(IERC20 usdc_, AgentRegistry registry_, AgentPayouts payouts_, address admin)
        EIP712("agentledger PaymentGateway", "1")
        CreditFallback(usdc_)
    {
        if (address(registry_) == address(0) || address(payouts_) == address(0) || admin == address(0)) {
            revert ZeroAddress();
        }
        registry = registry_;
        payouts = payouts_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    // ---- funding ------------------------------------------------------------------------

    /// @notice Pull `amount` of the buyer's approved USDC into escrow for `jobId`. `signature` is
    /// the buyer's EIP-712 signature of Funding(jobId, buyer, providerTokenId, amount, deadline)
    /// (see fundingDigest); the buyer can reclaim only after `deadline`, so it consents to that too.
    function fund(
        bytes32 jobId,
        address buyer,
        uint256 providerTokenId,
        uint256 amount,
        uint64 deadline,
        bytes calldata signature
    ) external onlyRole(OPERATOR_ROLE) whenNotPaused nonReentrant {
        if (_jobs[jobId].status != Status.None) revert JobExists(jobId);
        if (buyer == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (deadline <= block.timestamp) revert DeadlineInPast(deadline);
        if (registry.isAgentPaused(providerTokenId)) revert AgentPaused(providerTokenId);
        if (registry.selfWalletOf(providerTokenId) == address(0)) revert NoSelfWallet(providerTokenId); // none could attest
        bytes32 digest = fundingDigest(jobId, buyer, providerTokenId, amount, deadline);
        if (!SignatureChecker.isValidSignatureNow(buyer, digest, signature)) revert BadBuyerSignature(jobId, buyer);

        _jobs[jobId] = Job(buyer, deadline, Status.Funded, providerTokenId, amount);
        totalEscrowed += amount;
        emit JobFunded(jobId, buyer, providerTokenId, amount, deadline);
        // slither-disable-next-line arbitrary-send-erc20
        usdc.safeTransferFrom(buyer, address(this), amount); // the buyer signed for exactly this (checked above)
    }

    /// @notice The EIP-712 digest the buyer signs to consent to a funding.
    function fundingDigest(bytes32 jobId, address buyer, uint256 providerTokenId, uint256 amount, uint64 deadline)
        public
        view
        returns (bytes32)
    {
        return _hashTypedDataV4(
            keccak256(abi.encode(FUNDING_TYPEHASH, jobId, buyer, providerTokenId, amount, deadline))
        );
    }

    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    // ---- release ------------------------------------------------------------------------

    /// @notice The exact string the provider signs (EIP-191 personal_sign) to release a job.
    function attestationMessage(bytes32 jobId, string calldata cid, uint256 timestamp)
        public
        pure
        returns (string memory)
    {
        return string.concat(
            "complete:", Strings.toHexString(uint256(jobId), 32), ":", cid, ":", Strings.toString(timestamp)
        );
    }

    /// @notice Release a funded job with the provider's attestation; callable by anyone.
    function release(bytes32 jobId, string calldata cid, uint256 timestamp, bytes calldata signature)
        external
        whenNotPaused
        nonReentrant
    {
        Job storage job = _funded(jobId);
        if (block.timestamp > job.deadline) revert DeadlinePassed(jobId, job.deadline);
        bytes32 digest = MessageHashUtils.toEthSignedMessageHash(bytes(attestationMessage(jobId, cid, timestamp)));
        address expected = registry.requireSelfWallet(job.providerTokenId); // zero after a change of hands
        // slither-disable-next-line unused-return
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(digest, signature); // the 3rd value only details err
        if (err != ECDSA.RecoverError.NoError || signer != expected) revert BadAttestation(jobId, signer, expected);

        uint256 amount = job.amount;
        job.status = Status.Released;
        totalEscrowed -= amount;
        emit JobReleased(jobId, job.providerTokenId, amount, cid, timestamp, msg.sender);
        _payProvider(jobId, job.providerTokenId, amount);
    }

    // ---- disputes and refunds -------------------------------------------------------------

    /// @notice The buyer freezes a funded job before release; only an arbiter can then settle it.
    function openDispute(bytes32 jobId) external {
        Job storage job = _funded(jobId);
        if (msg.sender != job.buyer) revert NotBuyer(jobId, msg.sender);
        job.status = Status.Disputed;
        emit DisputeOpened(jobId, msg.sender);
    }

    /// @notice Resolve a dispute: `providerAmount` goes through the payout path, the rest back
    /// to the buyer (whole release = amount, whole refund = 0).
    function resolveDispute(bytes32 jobId, uint256 providerAmount) external onlyRole(ARBITER_ROLE) nonReentrant {
        Job storage job = _jobs[jobId];
        if (job.status == Status.None) revert UnknownJob(jobId);
        if (job.status != Status.Disputed) revert WrongStatus(jobId, job.status);
        uint256 amount = job.amount;
        if (providerAmount > amount) revert SplitTooLarge(providerAmount, amount);

        job.status = Status.Resolved;
        totalEscrowed -= amount;
        emit DisputeResolved(jobId, providerAmount, amount - providerAmount, msg.sender);
        if (providerAmount > 0) _payProvider(jobId, job.providerTokenId, providerAmount);
        _payOrCredit(job.buyer, amount - providerAmount);
    }

    /// @notice The buyer takes the funds back once the deadline passed with no release.
    function reclaim(bytes32 jobId) external nonReentrant {
        Job storage job = _funded(jobId);
        if (msg.sender != job.buyer) revert NotBuyer(jobId, msg.sender);
        if (block.timestamp <= job.deadline) revert DeadlineNotPassed(jobId, job.deadline);
        uint256 amount = job.amount;
        job.status = Status.Refunded;
        totalEscrowed -= amount;
        emit JobReclaimed(jobId, msg.sender, amount);
        _payOrCredit(msg.sender, amount);
    }

    // ---- admin and views ------------------------------------------------------------------

    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }

    function getJob(bytes32 jobId) external view returns (Job memory) {
        return _jobs[jobId];
    }

    // ---- internals ------------------------------------------------------------------------

    function _funded(bytes32 jobId) private view returns (Job storage job) {
        job = _jobs[jobId];
        if (job.status == Status.None) revert UnknownJob(jobId);
        if (job.status != Status.Funded) revert WrongStatus(jobId, job.status);
    }

    function _payProvider(bytes32 jobId, uint256 tokenId, uint256 amount) private {
        usdc.forceApprove(address(payouts), amount);
        payouts.pay(tokenId, amount, jobId);
    }
}
