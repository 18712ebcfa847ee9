// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @notice Push a USDC payment, or keep it as a withdrawable credit when the payee cannot
/// receive (e.g. a USDC-blacklisted address), so that one bad payee never blocks a payout.
abstract contract CreditFallback is ReentrancyGuard {
    using SafeERC20 for IERC20;

    IERC20 public immutable usdc;

    /// @notice USDC owed to each address that could not be paid directly.
    mapping(address => uint256) public creditOf;
    /// @notice Sum of all credits: part of what this contract owes.
    uint256 public totalCredits;

    event PaymentCredited(address indexed payee, uint256 amount);
    event CreditWithdrawn(address indexed payee, address indexed to, uint256 amount);

    error ZeroAddress();
    error NothingToWithdraw();

    constructor(IERC20 usdc_) {
        if (address(usdc_) == address(0)) revert ZeroAddress();
        usdc = usdc_;
    }

    /// @notice Withdraw the caller's whole credit to `to` (which may differ from the caller,
    /// so a blacklisted payee can still collect through another address).
    function withdrawCredit(address to) external nonReentrant {
        if (to == address(0)) revert ZeroAddress();
        uint256 amount = creditOf[msg.sender];
        if (amount == 0) revert NothingToWithdraw();
        creditOf[msg.sender] = 0;
        totalCredits -= amount;
        emit CreditWithdrawn(msg.sender, to, amount);
        usdc.safeTransfer(to, amount);
    }

    function _payOrCredit(address payee, uint256 amount) internal {
        if (amount == 0) return;
        if (payee == address(0) || !usdc.trySafeTransfer(payee, amount)) {
            creditOf[payee] += amount;
            totalCredits += amount;
            emit PaymentCredited(payee, amount);
        }
    }
}
