// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {AccessControl} from "@openzeppelin/contracts/access/AccessControl.sol";
import {Pausable} from "@openzeppelin/contracts/utils/Pausable.sol";

/// @notice Checkpoints (tree size, root) of the audit log's RFC 9162 Merkle tree, and a view
/// that checks an inclusion proof against an anchored root, so an auditor can verify an entry
/// from a block explorer's read tab. Hashing: SHA-256, leaf prefix 0x00, node prefix 0x01.
contract AuditAnchor is AccessControl, Pausable {
    bytes32 public constant ANCHORER_ROLE = keccak256("ANCHORER_ROLE");
    bytes32 public constant PAUSER_ROLE = keccak256("PAUSER_ROLE");

    struct Checkpoint {
        uint64 treeSize;
        uint64 timestamp;
        bytes32 root;
    }

    Checkpoint[] private _checkpoints;
    /// @notice Root anchored for a tree size (zero when that size was never anchored).
    mapping(uint256 => bytes32) public rootAt;

    event Anchored(uint256 indexed index, uint64 indexed treeSize, bytes32 root, address anchorer);

    error SizeNotIncreasing(uint64 treeSize, uint64 lastSize);
    error ZeroRoot();
    error ZeroAddress();

    constructor(address admin) {
        if (admin == address(0)) revert ZeroAddress();
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
    }

    function anchor(uint64 treeSize, bytes32 root) external onlyRole(ANCHORER_ROLE) whenNotPaused {
        uint64 last = latestTreeSize();
        if (treeSize <= last) revert SizeNotIncreasing(treeSize, last);
        if (root == bytes32(0)) revert ZeroRoot();
        uint256 index = _checkpoints.length;
        _checkpoints.push(Checkpoint(treeSize, uint64(block.timestamp), root));
        rootAt[treeSize] = root;
        emit Anchored(index, treeSize, root, msg.sender);
    }

    function checkpointCount() external view returns (uint256) {
        return _checkpoints.length;
    }

    function checkpoint(uint256 index) external view returns (Checkpoint memory) {
        return _checkpoints[index];
    }

    function latestTreeSize() public view returns (uint64) {
        uint256 n = _checkpoints.length;
        return n == 0 ? 0 : _checkpoints[n - 1].treeSize;
    }

    /// @notice RFC 9162 leaf hash: SHA-256(0x00 || data).
    function leafHash(bytes calldata data) external pure returns (bytes32) {
        return sha256(abi.encodePacked(bytes1(0x00), data));
    }

    /// @notice Whether `proof` shows leaf `leafIndex` with hash `leaf` in the anchored tree of
    /// `treeSize` leaves. False (never a revert) for any malformed or unanchored input.
    function verifyInclusion(uint256 leafIndex, uint256 treeSize, bytes32 leaf, bytes32[] calldata proof)
        external
        view
        returns (bool)
    {
        bytes32 root = rootAt[treeSize];
        if (root == bytes32(0)) return false;
        (bool ok, bytes32 computed) = rootFromInclusionProof(leafIndex, treeSize, leaf, proof);
        return ok && computed == root;
    }

    /// @notice RFC 9162 section 2.1.3.2: the root implied by an inclusion proof.
    function rootFromInclusionProof(uint256 leafIndex, uint256 treeSize, bytes32 leaf, bytes32[] calldata proof)
        public
        pure
        returns (bool ok, bytes32 root)
    {
        if (leafIndex >= treeSize) return (false, bytes32(0));
        uint256 fn = leafIndex;
        uint256 sn = treeSize - 1;
        root = leaf;
        for (uint256 i = 0; i < proof.length; ++i) {
            if (sn == 0) return (false, bytes32(0));
            if (fn & 1 == 1 || fn == sn) {
                root = sha256(abi.encodePacked(bytes1(0x01), proof[i], root));
                while (fn & 1 == 0 && fn != 0) {
                    fn >>= 1;
                    sn >>= 1;
                }
            } else {
                root = sha256(abi.encodePacked(bytes1(0x01), root, proof[i]));
            }
            fn >>= 1;
            sn >>= 1;
        }
        if (sn != 0) return (false, bytes32(0));
        return (true, root);
    }

    function pause() external onlyRole(PAUSER_ROLE) {
        _pause();
    }

    function unpause() external onlyRole(PAUSER_ROLE) {
        _unpause();
    }
}
