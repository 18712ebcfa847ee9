"""The deliverable upload slots: one upload per order and `per_provider` per
provider are read at once, refused at once past that (never queued), and given back on exit."""

from __future__ import annotations

import asyncio

import pytest

from api.checkout import UploadSlots
from api.errors import ApiError


def test_one_upload_per_order_and_two_per_provider() -> None:
    async def main() -> None:
        slots = UploadSlots(total=8, per_provider=2, read_deadline=1.0)
        with slots.hold("ord_1", "prov_a"), slots.hold("ord_2", "prov_a"):
            with pytest.raises(ApiError) as same_order, slots.hold("ord_1", "prov_b"):
                pass
            assert (same_order.value.status, same_order.value.code) == (409, "upload_in_progress")
            with pytest.raises(ApiError) as third, slots.hold("ord_3", "prov_a"):
                pass
            assert (third.value.status, third.value.code) == (429, "upload_slots_busy")
            assert third.value.headers["Retry-After"] and not third.value.replayable
            with slots.hold("ord_3", "prov_b"):  # another provider is not held up
                pass
        with slots.hold("ord_1", "prov_a"), slots.hold("ord_3", "prov_a"):  # all given back
            pass

    asyncio.run(main())
