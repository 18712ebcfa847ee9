from tests.integration.chainkit import USDC, System, assert_reverts


def test_deploy_wires_roles(system: System) -> None:
    reg = system.registry
    assert reg.functions.hasRole(reg.functions.REGISTRAR_ROLE().call(), system.operator.address).call()
    assert reg.functions.hasRole(reg.functions.EARNINGS_ROLE().call(), system.payouts.address).call()
    assert system.usdc.functions.decimals().call() == 6
    t = system.register_agent(system.users[0].address, system.users[1].address, "agl_0123456789ab")
    assert t == 1
    assert_reverts(
        lambda: system.tx(
            system.operator, reg.functions.mint(system.users[0].address, system.users[2].address, "agl_0123456789ab", 0)
        ),
        "WalletIdTaken",
    )
    system.mint_usdc(system.users[3].address, 5 * USDC)
    assert system.balance(system.users[3].address) == 5 * USDC
