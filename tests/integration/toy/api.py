"""The toy's HTTP side: a request model, its row of the operation table and the row's run."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from api.feature import Feature, Parts
from api.http import encode
from api.models import parse_query
from api.operation import Call, Operation, Reply
from core.services import Services
from core.store import wallets as wallet_store
from tests.integration.toy import core as toy


class GreetingQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class Greeting(BaseModel):
    message: str


async def run_greeting(services: Services, call: Call) -> Reply:
    q = parse_query(GreetingQuery, dict(call.query))
    agents, _earned, _tolls = await services.reads.run(wallet_store.network_totals)
    return Reply(200, encode({"message": toy.greet(services.part(toy.Greeter), q.name, agents)}).encode())


def install(services: Services) -> Parts:
    services.provide(toy.Greeter("Hello"))
    return Parts()


FEATURE = Feature(
    "toy",
    (
        Operation(
            "GET",
            "/api/toy/greeting",
            "toyGreeting",
            "A greeting that counts the agents",
            Greeting,
            query=GreetingQuery,
            auth="none",
            errors={400: ("invalid_name",)},
            run=run_greeting,
        ),
    ),
    install,
    follower=lambda services: toy.GreetingFollower(),
    toolset="meta",  # its MCP tool's toolset
)
