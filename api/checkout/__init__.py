"""Escrow checkout under /api/acp (ACP 2026-04-17), the HTTP side of core.checkout: the buyer's checkout
sessions and orders (sessions), providers and the catalogue (providers), the provider's signed moves
of an order and its deliverable (provider_orders); their models, their rows (operations) and the ACP
plumbing they share (acp). `install` makes the checkout's context and the deliverables' store."""

from __future__ import annotations

from api.checkout.acp import add_acp_headers
from api.checkout.operations import OPERATIONS
from api.checkout.provider_orders import UploadSlots
from api.feature import Feature, Parts
from core.checkout import follower
from core.checkout.context import Checkout
from core.checkout.sweep import SWEEP_INTERVAL, sweep
from core.deliverables import PIN_INTERVAL, Deliverables
from core.jobs import Every, Job
from core.services import Services

__all__ = ["FEATURE", "OPERATIONS", "UploadSlots", "install"]


def install(services: Services) -> Parts:
    """The checkout's context, the deliverables' store (pinned to a Kubo node when one is configured),
    the upload slots; the checkout sweep and the IPFS pin job."""
    settings = services.settings
    checkout = services.provide(Checkout(services, session_ttl=settings.checkout_session_ttl))
    deliverables = services.provide(
        Deliverables(services.reads, services.writer, settings.ipfs_api_url, services.clock)
    )
    services.provide(UploadSlots())
    # at start too: sessions a crashed run left complete_in_progress are settled against the chain at once
    jobs = [Job("checkout-sweep", Every(SWEEP_INTERVAL), lambda: sweep(checkout), at_start=True)]
    if settings.ipfs_api_url:
        jobs.append(Job("ipfs-pin", Every(PIN_INTERVAL), deliverables.pin_unpinned))
    return Parts(jobs=tuple(jobs))


FEATURE = Feature(
    "checkout", OPERATIONS, install=install, follower=follower.follower, http=add_acp_headers, toolset="checkout"
)
