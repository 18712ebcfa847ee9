// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {AgentRegistry} from "./AgentRegistry.sol";
import {CreditFallback} from "./CreditFallback.sol";

/// @notice The agent-ownership marketplace ("drop"). A seller lists an agent NFT (escrowed
/// here, agent paused) with an asking price and a floor of at least 25% of the agent's
/// lifetime earnings at listing: the registry's on-chain earnings plus the earnings reported to
/// the service off-chain, which the seller brings as an EarningsStatement signed by a holder of
/// STATEMENT_SIGNER_ROLE (the service's operator), good once and until its deadline. Buy-now, or the seller accepts a buyer's
/// EIP-712 offer at or above the floor; either starts a 7-day notice window during which the
/// sale cannot be cancelled; after it anyone settles: NFT to the buyer, 98% to the seller and
/// 2% (plus rounding dust) to the treasury.
contract AgentMarketplace is AccessControl, Pausable, EIP712, CreditFallback {
    using SafeERC20 for IERC20;

    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");
    bytes32 public constant OFFER_TYPEHASH =
        keccak256("Offer(uint256 listingId,address buyer,uint256 price,uint256 nonce,uint256 deadline)");
    /// @notice Signs the earnings statements a listing needs (the service's operator).
    bytes32 public constant STATEMENT_SIGNER_ROLE = keccak256("STATEMENT_SIGNER_ROLE");
    bytes32 public constant EARNINGS_TYPEHASH = keccak256(
        "EarningsStatement(uint256 tokenId,address seller,uint256 reportedEarnings,uint256 nonce,uint256 deadline)"
    );

    uint64 public constant DEFAULT_DURATION = 30 days;
    uint64 public constant MAX_DURATION = 365 days;
    uint64 public constant NOTICE_PERIOD = 7 days;
    uint256 public constant BPS = 10_000;
    uint256 public constant SELLER_BPS = 9_800;
    uint256 public constant MIN_FLOOR_BPS = 2_500;

    enum Status {
        None,
        Listed,
        Committed,
        Settled,
        Cancelled,
        Expired
    }

    struct Listing {
        address seller;
        uint64 expiresAt;
        Status status;
        address buyer;
        uint64 noticeEndsAt;
        uint256 tokenId;
        uint256 askingPrice;
        uint256 floorPrice;
        uint256 earningsAtListing;
        uint256 price; // committed price
    }

    /// @notice What the service states an agent earned off-chain (reported earnings, micro-USDC), for
    /// one listing of `tokenId` by `seller` before `deadline`; `nonce` makes it good once.
    struct EarningsStatement {
        uint256 tokenId;
        address seller;
        uint256 reportedEarnings;
        uint256 nonce;
        uint256 deadline;
    }

    struct Offer {
        uint256 listingId;
        address buyer;
        uint256 price;
        uint256 nonce;
        uint256 deadline;
    }

    AgentRegistry public immutable registry;
    address public treasury;
    uint256 public listingCount;
    mapping(uint256 => Listing) private _listings;
    mapping(address => mapping(uint256 => bool)) public offerNonceUsed;
    mapping(uint256 => bool) public statementNonceUsed;
    /// @notice USDC held for committed, unsettled sales.
    uint256 public totalCommitted;

    event Listed(
        uint256 indexed listingId,
        uint256 indexed tokenId,
        address indexed seller,
        uint256 askingPrice,
        uint256 floorPrice,
        uint256 earningsAtListing,
        uint64 expiresAt
    );
    event SaleCommitted(
        uint256 indexed listingId, address indexed buyer, uint256 price, uint64 noticeEndsAt, bool viaOffer, uint256 offerNonce
    );
    event SaleSettled(
        uint256 indexed listingId, uint256 indexed tokenId, address indexed buyer, address seller, uint256 sellerAmount, uint256 fee
    );
    event ListingCancelled(uint256 indexed listingId, uint256 indexed tokenId);
    event ListingExpired(uint256 indexed listingId, uint256 indexed tokenId);
    event OfferNonceCancelled(address indexed buyer, uint256 nonce);
    event TreasuryChanged(address indexed previous, address indexed current);

    error NotTokenOwner(uint256 tokenId, address caller);
    error ZeroPrice();
    error FloorAboveAsking(uint256 floorPrice, uint256 askingPrice);
    error FloorTooLow(uint256 floorPrice, uint256 minimum);
    error BadDuration(uint64 duration);
    error UnknownListing(uint256 listingId);
    error WrongStatus(uint256 listingId, Status status);
    error ListingEnded(uint256 listingId, uint64 expiresAt);
    error ListingNotEnded(uint256 listingId, uint64 expiresAt);
    error NotSeller(uint256 listingId, address caller);
    error SellerCannotBuy(uint256 listingId);
    error NoticeWindowActive(uint256 listingId, uint64 noticeEndsAt);
    error OfferExpired(uint256 deadline);
    error OfferForOtherListing(uint256 offerListingId);
    error OfferBelowFloor(uint256 price, uint256 floorPrice);
    error OfferNonceUsed(address buyer, uint256 nonce);
    error BadOfferSignature(address signer, address buyer);
    error StatementForOther(uint256 tokenId, address seller);
    error StatementExpired(uint256 deadline);
    error StatementNonceUsed(uint256 nonce);
    error BadStatementSigner(address signer);

    constructor(IERC20 usdc_, AgentRegistry registry_, address treasury_, address admin)
        EIP712("agentledger Marketplace", "1")
        CreditFallback(usdc_)
    {
        if (address(registry_) == address(0) || treasury_ == address(0) || admin == address(0)) revert ZeroAddress();
        registry = registry_;
        treasury = treasury_;
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    // ---- listing --------------------------------------------------------------------------

    /// @notice List `tokenId` (approve this contract first). `duration` 0 means 30 days. `statement`
    /// and `signature`: the service's EarningsStatement for this token and seller.
    function list(
        uint256 tokenId,
        uint256 askingPrice,
        uint256 floorPrice,
        uint64 duration,
        EarningsStatement calldata statement,
        bytes calldata signature
    ) external whenNotPaused nonReentrant returns (uint256 listingId) {
        if (registry.ownerOf(tokenId) != msg.sender) revert NotTokenOwner(tokenId, msg.sender);
        if (askingPrice == 0 || floorPrice == 0) revert ZeroPrice();
        if (floorPrice > askingPrice) revert FloorAboveAsking(floorPrice, askingPrice);
        uint256 earnings = _useStatement(tokenId, statement, signature) + registry.lifetimeEarningsOf(tokenId);
        uint256 minimum = _ceilDiv(earnings * MIN_FLOOR_BPS, BPS);
        if (floorPrice < minimum) revert FloorTooLow(floorPrice, minimum);
        if (duration == 0) duration = DEFAULT_DURATION;
        if (duration > MAX_DURATION) revert BadDuration(duration);

        listingId = ++listingCount;
        uint64 expiresAt = uint64(block.timestamp) + duration;
        Listing storage l = _listings[listingId];
        l.seller = msg.sender;
        l.expiresAt = expiresAt;
        l.status = Status.Listed;
        l.tokenId = tokenId;
        l.askingPrice = askingPrice;
        l.floorPrice = floorPrice;
        l.earningsAtListing = earnings;
        emit Listed(listingId, tokenId, msg.sender, askingPrice, floorPrice, earnings, expiresAt);

        registry.transferFrom(msg.sender, address(this), tokenId);
        registry.setSalePause(tokenId, true, msg.sender);
    }

    // ---- committing a sale -------------------------------------------------------------------

    /// @notice Buy now at the asking price (approve the USDC first).
    function buy(uint256 listingId) external whenNotPaused nonReentrant {
        Listing storage l = _open(listingId);
        if (msg.sender == l.seller) revert SellerCannotBuy(listingId);
        _commit(l, listingId, msg.sender, l.askingPrice, false, 0);
    }

    /// @notice The seller accepts a buyer's signed offer at or above the floor.
    function acceptOffer(uint256 listingId, Offer calldata offer, bytes calldata signature)
        external
        whenNotPaused
        nonReentrant
    {
        Listing storage l = _open(listingId);
        if (msg.sender != l.seller) revert NotSeller(listingId, msg.sender);
        if (offer.listingId != listingId) revert OfferForOtherListing(offer.listingId);
        if (offer.buyer == l.seller) revert SellerCannotBuy(listingId);
        if (block.timestamp > offer.deadline) revert OfferExpired(offer.deadline);
        if (offer.price < l.floorPrice) revert OfferBelowFloor(offer.price, l.floorPrice);
        if (offerNonceUsed[offer.buyer][offer.nonce]) revert OfferNonceUsed(offer.buyer, offer.nonce);
        address signer = ECDSA.recover(_hashTypedDataV4(hashOffer(offer)), signature);
        if (signer != offer.buyer) revert BadOfferSignature(signer, offer.buyer);

        offerNonceUsed[offer.buyer][offer.nonce] = true;
        _commit(l, listingId, offer.buyer, offer.price, true, offer.nonce);
    }

    /// @notice A buyer withdraws an offer it has signed.
    function cancelOfferNonce(uint256 nonce) external {
        if (offerNonceUsed[msg.sender][nonce]) revert OfferNonceUsed(msg.sender, nonce);
        offerNonceUsed[msg.sender][nonce] = true;
        emit OfferNonceCancelled(msg.sender, nonce);
    }

    // ---- ending a listing ---------------------------------------------------------------------

    /// @notice After the notice window anyone settles the sale.
    function settle(uint256 listingId) external nonReentrant {
        Listing storage l = _get(listingId);
        if (l.status != Status.Committed) revert WrongStatus(listingId, l.status);
        if (block.timestamp < l.noticeEndsAt) revert NoticeWindowActive(listingId, l.noticeEndsAt);

        uint256 price = l.price;
        uint256 sellerAmount = (price * SELLER_BPS) / BPS;
        uint256 fee = price - sellerAmount;
        l.status = Status.Settled;
        totalCommitted -= price;
        emit SaleSettled(listingId, l.tokenId, l.buyer, l.seller, sellerAmount, fee);

        registry.setSalePause(l.tokenId, false, address(0));
        // transferFrom, not safeTransferFrom: a buyer contract must not be able to block settlement.
        registry.transferFrom(address(this), l.buyer, l.tokenId);
        _payOrCredit(l.seller, sellerAmount);
        _payOrCredit(treasury, fee);
    }

    /// @notice The seller withdraws the listing before any buyer has committed.
    function cancel(uint256 listingId) external nonReentrant {
        Listing storage l = _get(listingId);
        if (msg.sender != l.seller) revert NotSeller(listingId, msg.sender);
        if (l.status == Status.Committed) revert NoticeWindowActive(listingId, l.noticeEndsAt);
        if (l.status != Status.Listed) revert WrongStatus(listingId, l.status);
        l.status = Status.Cancelled;
        emit ListingCancelled(listingId, l.tokenId);
        _returnToSeller(l);
    }

    /// @notice After the listing's TTL with no buyer anyone returns the NFT to the seller.
    function expire(uint256 listingId) external nonReentrant {
        Listing storage l = _get(listingId);
        if (l.status != Status.Listed) revert WrongStatus(listingId, l.status);
        if (block.timestamp < l.expiresAt) revert ListingNotEnded(listingId, l.expiresAt);
        l.status = Status.Expired;
        emit ListingExpired(listingId, l.tokenId);
        _returnToSeller(l);
    }

    // ---- admin and views --------------------------------------------------------------------

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

    function getListing(uint256 listingId) external view returns (Listing memory) {
        return _listings[listingId];
    }

    function hashEarningsStatement(EarningsStatement calldata statement) public pure returns (bytes32) {
        return keccak256(
            abi.encode(
                EARNINGS_TYPEHASH,
                statement.tokenId,
                statement.seller,
                statement.reportedEarnings,
                statement.nonce,
                statement.deadline
            )
        );
    }

    function hashOffer(Offer calldata offer) public pure returns (bytes32) {
        return keccak256(abi.encode(OFFER_TYPEHASH, offer.listingId, offer.buyer, offer.price, offer.nonce, offer.deadline));
    }

    function domainSeparator() external view returns (bytes32) {
        return _domainSeparatorV4();
    }

    // ---- internals --------------------------------------------------------------------------

    /// @dev The reported earnings of a valid statement for this listing, which is then used up.
    function _useStatement(uint256 tokenId, EarningsStatement calldata statement, bytes calldata signature)
        private
        returns (uint256)
    {
        if (statement.tokenId != tokenId || statement.seller != msg.sender) {
            revert StatementForOther(statement.tokenId, statement.seller);
        }
        if (block.timestamp > statement.deadline) revert StatementExpired(statement.deadline);
        if (statementNonceUsed[statement.nonce]) revert StatementNonceUsed(statement.nonce);
        address signer = ECDSA.recover(_hashTypedDataV4(hashEarningsStatement(statement)), signature);
        if (!hasRole(STATEMENT_SIGNER_ROLE, signer)) revert BadStatementSigner(signer);
        statementNonceUsed[statement.nonce] = true;
        return statement.reportedEarnings;
    }

    function _get(uint256 listingId) private view returns (Listing storage l) {
        l = _listings[listingId];
        if (l.status == Status.None) revert UnknownListing(listingId);
    }

    function _open(uint256 listingId) private view returns (Listing storage l) {
        l = _get(listingId);
        if (l.status != Status.Listed) revert WrongStatus(listingId, l.status);
        if (block.timestamp >= l.expiresAt) revert ListingEnded(listingId, l.expiresAt);
    }

    function _commit(Listing storage l, uint256 listingId, address buyer, uint256 price, bool viaOffer, uint256 nonce)
        private
    {
        uint64 noticeEndsAt = uint64(block.timestamp) + NOTICE_PERIOD;
        l.status = Status.Committed;
        l.buyer = buyer;
        l.price = price;
        l.noticeEndsAt = noticeEndsAt;
        totalCommitted += price;
        emit SaleCommitted(listingId, buyer, price, noticeEndsAt, viaOffer, nonce);
        usdc.safeTransferFrom(buyer, address(this), price);
    }

    function _returnToSeller(Listing storage l) private {
        registry.setSalePause(l.tokenId, false, address(0));
        registry.transferFrom(address(this), l.seller, l.tokenId);
    }

    function _ceilDiv(uint256 a, uint256 b) private pure returns (uint256) {
        return a == 0 ? 0 : (a - 1) / b + 1;
    }
}
