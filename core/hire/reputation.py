"""Reputation: earned only from paid, settled jobs, by a published formula.

A sample is written when a job's money has settled and the provider's work decided it: a standard
hire charged (success) or its reservation given back because the provider failed (failure: the
caller's funds were really reserved); an escrow job whose release (success) or refund (failure) is
final on-chain. Jobs cut off by a restart, refused before they ran, and jobs between a caller and a
provider under one control (the same account; an escrow caller that is the provider's owner or self
wallet) give no sample, so a provider cannot review itself for free: inflating a score takes real
hires from someone else, each paying the 2% service cut. Every sample names the audit entry of its
settlement (GET /api/a2a/reputation lists them).

The score of a service, 0-100 (SCORE_FORMULA below, also published in the registry's answer):
- each sample weighs w = 0.5 ^ (age / 30 days) (recency decay); samples older than a year are left out;
- n = sum of w, s = sum of w over successes; p = s / n;
- W = the Wilson score lower bound of p at 95% (z = 1.96):
  (p + z^2/2n - z * sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n);
- L = 1 - 0.2 * min(1, avgResponseMs / (SLA * 1000)) (a latency term: answering at the SLA costs 20%);
- score = round(100 * W * L, 2), and 0 below MIN_SAMPLES samples.
successRate is successes / samples (not weighted); avgResponseMs and p95ResponseMs are over the
successful samples (p95 over the last 1,000 of them). Ties in the registry go to the lower wallet id (deterministic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.store import Conn
from core.store import hire as store
from core.store.hire import SampleRow

HALF_LIFE_SECONDS = 30 * 86_400
WINDOW_SECONDS = 365 * 86_400
Z = 1.96
MIN_SAMPLES = 3
LATENCY_WEIGHT = 0.2

SCORE_FORMULA = (
    "score = round(100 * W * L, 2) with at least 3 samples (else 0): samples weigh 0.5^(age/30 days) "
    "(the last year); p = weighted successes / weighted samples; W = Wilson lower bound of p at z = 1.96 "
    "over the weighted count; L = 1 - 0.2 * min(1, avgResponseMs / (SLA seconds * 1000)). Samples: "
    "standard hires charged or released after a provider failure, escrow jobs released or refunded "
    "(final on-chain); none for self-dealing or for jobs cut off by a restart."
)


@dataclass(frozen=True)
class Reputation:
    jobs: int
    successes: int
    score: float
    success_rate: float | None
    avg_ms: int | None
    p95_ms: int | None
    last_active_at: float | None


def wilson_lower_bound(successes: float, n: float, z: float = Z) -> float:
    if n <= 0:
        return 0.0
    p = successes / n
    z2 = z * z
    centre = p + z2 / (2 * n)
    margin = z * math.sqrt(max(0.0, p * (1 - p) / n + z2 / (4 * n * n)))
    return max(0.0, (centre - margin) / (1 + z2 / n))


def score_of(jobs: int, weighted: float, weighted_successes: float, avg_ms: float | None, sla_seconds: int) -> float:
    """The published score from a service's (weighted) counts."""
    if jobs < MIN_SAMPLES:
        return 0.0
    latency = 1.0 - LATENCY_WEIGHT * min(1.0, (avg_ms or 0) / (sla_seconds * 1000))
    return round(100 * wilson_lower_bound(weighted_successes, weighted) * latency, 2)


def refresh(conn: Conn, provider_uuid: str, service_type: str, now: float) -> Reputation | None:
    """Recompute one service's reputation exactly from its samples of the last year (aggregated in
    SQL) and store it, with the weighted sums as of `now` (the hourly job, and a changed SLA)."""
    service = store.get_service(conn, provider_uuid, service_type)
    if service is None:
        return None
    since = now - WINDOW_SECONDS
    st = store.sample_stats(conn, provider_uuid, service_type, since=since, now=now, half_life=HALF_LIFE_SECONDS)
    return _store(
        conn,
        service,
        jobs=st.jobs,
        successes=st.successes,
        w_jobs=st.weighted,
        w_successes=st.weighted_successes,
        ok_ms_total=st.ok_ms_total,
        last_active_at=st.last_at,
        now=now,
    )


def _store(
    conn: Conn,
    service: store.ServiceRow,
    *,
    jobs: int,
    successes: int,
    w_jobs: float,
    w_successes: float,
    ok_ms_total: int,
    last_active_at: float | None,
    now: float,
) -> Reputation:
    avg = round(ok_ms_total / successes) if successes else None
    p95 = store.recent_success_p95(conn, service.provider_uuid, service.service_type, now - WINDOW_SECONDS)
    r = Reputation(
        jobs=jobs,
        successes=successes,
        score=score_of(jobs, w_jobs, w_successes, avg, service.sla_seconds),
        success_rate=round(successes / jobs, 4) if jobs else None,
        avg_ms=avg,
        p95_ms=p95,
        last_active_at=last_active_at,
    )
    store.set_reputation(
        conn,
        service.provider_uuid,
        service.service_type,
        jobs=r.jobs,
        successes=r.successes,
        score=r.score,
        success_rate=r.success_rate,
        avg_ms=r.avg_ms,
        p95_ms=r.p95_ms,
        last_active_at=r.last_active_at,
        w_jobs=w_jobs,
        w_successes=w_successes,
        ok_ms_total=ok_ms_total,
        now=now,
    )
    return r


def add_sample(
    conn: Conn,
    *,
    job: store.JobRow,
    success: bool,
    response_ms: int,
    audit_id: int,
    now: float,
) -> None:
    """A settled job's sample (once per job) and the service's new reputation, unless self-dealing.
    Incremental: the stored weighted sums decay to `now` and take the sample (O(1), whatever the
    service's history); samples leaving the one-year window are dropped by the hourly refresh."""
    if job.self_dealing:
        return
    sample = SampleRow(job.id, job.provider_uuid, job.service_type, success, response_ms, audit_id, now)
    if not store.insert_sample(conn, sample):
        return
    service = store.get_service(conn, job.provider_uuid, job.service_type)
    if service is None:
        return
    decay = 0.5 ** (max(0.0, now - (service.score_at or now)) / HALF_LIFE_SECONDS)
    _store(
        conn,
        service,
        jobs=service.jobs + 1,
        successes=service.successes + int(success),
        w_jobs=service.w_jobs * decay + 1,
        w_successes=service.w_successes * decay + int(success),
        ok_ms_total=service.ok_ms_total + (response_ms if success else 0),
        last_active_at=now,
        now=now,
    )
