// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";

/// @notice Local-only stand-in for USDC: 6 decimals, EIP-2612 permit, open mint, and a
/// blacklist like Circle's so tests can exercise payees that cannot receive.
contract MockUSDC is ERC20, ERC20Permit {
    mapping(address => bool) public isBlacklisted;

    event Blacklisted(address indexed account, bool blacklisted);

    error AccountBlacklisted(address account);

    constructor() ERC20("USD Coin (mock)", "USDC") ERC20Permit("USD Coin (mock)") {}

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice Anyone may mint: this contract is never deployed outside a local chain.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    function setBlacklisted(address account, bool blacklisted) external {
        isBlacklisted[account] = blacklisted;
        emit Blacklisted(account, blacklisted);
    }

    function _update(address from, address to, uint256 value) internal override {
        if (isBlacklisted[from]) revert AccountBlacklisted(from);
        if (isBlacklisted[to]) revert AccountBlacklisted(to);
        super._update(from, to, value);
    }
}
