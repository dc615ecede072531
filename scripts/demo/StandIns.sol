// SPDX-License-Identifier: CC0-1.0
pragma solidity ^0.8.20;

// Stand-ins for the delegate.xyz registries, written for `npm run demo`: the demo needs a chain whose
// registry addresses emit the registries' events, offline, and the real contracts' code is not part of
// this project. Each write has the real function's signature (so the same selector and calldata) and
// emits exactly the real event for the call, every time, even when the real contract would change
// nothing. They keep no state: the service computes all state from the events (and, for v1's
// revokeDelegate, from the call's input), so nothing else is needed. Not a registry: no views, no checks.

/// The v2 DelegateRegistry's writes and events.
contract DelegateRegistryStandIn {
    error MulticallFailed();

    event DelegateAll(address indexed from, address indexed to, bytes32 rights, bool enable);
    event DelegateContract(
        address indexed from, address indexed to, address indexed contract_, bytes32 rights, bool enable
    );
    event DelegateERC721(
        address indexed from,
        address indexed to,
        address indexed contract_,
        uint256 tokenId,
        bytes32 rights,
        bool enable
    );
    event DelegateERC20(
        address indexed from, address indexed to, address indexed contract_, bytes32 rights, uint256 amount
    );
    event DelegateERC1155(
        address indexed from,
        address indexed to,
        address indexed contract_,
        uint256 tokenId,
        bytes32 rights,
        uint256 amount
    );

    /// Each item is a call to this contract, made with delegatecall so that msg.sender stays the caller.
    function multicall(bytes[] calldata data) external payable returns (bytes[] memory results) {
        results = new bytes[](data.length);
        for (uint256 i = 0; i < data.length; ++i) {
            (bool success, bytes memory result) = address(this).delegatecall(data[i]);
            if (!success) revert MulticallFailed();
            results[i] = result;
        }
    }

    // The real writes return the delegation's hash; nobody reads it here, so these return nothing.

    function delegateAll(address to, bytes32 rights, bool enable) external payable {
        emit DelegateAll(msg.sender, to, rights, enable);
    }

    function delegateContract(address to, address contract_, bytes32 rights, bool enable) external payable {
        emit DelegateContract(msg.sender, to, contract_, rights, enable);
    }

    function delegateERC721(address to, address contract_, uint256 tokenId, bytes32 rights, bool enable)
        external
        payable
    {
        emit DelegateERC721(msg.sender, to, contract_, tokenId, rights, enable);
    }

    function delegateERC20(address to, address contract_, bytes32 rights, uint256 amount) external payable {
        emit DelegateERC20(msg.sender, to, contract_, rights, amount);
    }

    function delegateERC1155(address to, address contract_, uint256 tokenId, bytes32 rights, uint256 amount)
        external
        payable
    {
        emit DelegateERC1155(msg.sender, to, contract_, tokenId, rights, amount);
    }
}

/// The v1 DelegationRegistry's writes and events (none of its event parameters is indexed).
contract DelegationRegistryStandIn {
    event DelegateForAll(address vault, address delegate, bool value);
    event DelegateForContract(address vault, address delegate, address contract_, bool value);
    event DelegateForToken(address vault, address delegate, address contract_, uint256 tokenId, bool value);
    event RevokeAllDelegates(address vault);
    event RevokeDelegate(address vault, address delegate);

    function delegateForAll(address delegate, bool value) external {
        emit DelegateForAll(msg.sender, delegate, value);
    }

    function delegateForContract(address delegate, address contract_, bool value) external {
        emit DelegateForContract(msg.sender, delegate, contract_, value);
    }

    function delegateForToken(address delegate, address contract_, uint256 tokenId, bool value) external {
        emit DelegateForToken(msg.sender, delegate, contract_, tokenId, value);
    }

    function revokeAllDelegates() external {
        emit RevokeAllDelegates(msg.sender);
    }

    /// As the real one: the event names the vault twice, not the delegate; only the call's input does.
    function revokeDelegate(address) external {
        emit RevokeDelegate(msg.sender, msg.sender);
    }

    function revokeSelf(address vault) external {
        emit RevokeDelegate(vault, msg.sender);
    }
}
