// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC1271} from "@openzeppelin/contracts/interfaces/IERC1271.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/// @notice TEST ONLY (never deployed by scripts.deploy): a minimal ERC-1271 contract wallet. A
/// hash is valid when its owner key signed it (raw ECDSA over the hash). The owner can make it
/// approve an ERC-20 spender, so tests can fund gateway jobs from a contract wallet.
contract TestContractWallet is IERC1271 {
    address public immutable owner;

    error NotOwner(address caller);

    constructor(address owner_) {
        owner = owner_;
    }

    function approve(IERC20 token, address spender, uint256 amount) external {
        if (msg.sender != owner) revert NotOwner(msg.sender);
        token.approve(spender, amount);
    }

    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        (address signer, ECDSA.RecoverError err,) = ECDSA.tryRecover(hash, signature);
        return err == ECDSA.RecoverError.NoError && signer == owner ? IERC1271.isValidSignature.selector : bytes4(0);
    }
}
