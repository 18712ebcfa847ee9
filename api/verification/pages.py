"""The verification pages for people: an entry's checks and the formulas, as HTML."""

from __future__ import annotations

import html
from typing import Any

from aiohttp import web

from api.verification.documents import METHODOLOGY

_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
    "code,pre{font-family:ui-monospace,monospace;font-size:.85rem}pre{background:#f4f4f4;padding:.75rem;"
    "overflow-x:auto;white-space:pre-wrap;word-break:break-all}td{padding:.2rem .6rem;vertical-align:top}"
    ".ok{color:#176b2c}.bad{color:#a31515}"
)


def page(title: str, body: str) -> web.Response:
    text = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{_STYLE}</style></head>'
        f"<body>{body}</body></html>"
    )
    return web.Response(text=text, content_type="text/html")


def _rows(pairs: list[tuple[str, Any]]) -> str:
    cells = "".join(f"<tr><td>{html.escape(k)}</td><td><code>{html.escape(str(v))}</code></td></tr>" for k, v in pairs)
    return f"<table>{cells}</table>"


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def verification_html(v: dict[str, Any]) -> str:
    inc, anchor = v["inclusion"], v["anchor"]
    chain_ok = v["chain_hash_recomputed"] == v["chain_hash"]
    parts = [
        f"<h1>Audit entry {v['audit_id']}</h1>",
        _rows([("stream", v["stream"]), ("seq", v["seq"]), ("kind", v["kind"]), ("created", v["created_at"])]),
        "<h2>Chain hash</h2>",
        f'<p class="{"ok" if chain_ok else "bad"}">recomputed chain hash '
        f"{'matches' if chain_ok else 'DOES NOT match'} the stored one.</p>",
        _rows(
            [
                ("payload (RFC 8785)", v["payload_canonical"]),
                ("payload_hash", v["payload_hash"]),
                ("prev_hash", v["prev_hash"]),
                ("chain input", v["chain_input"]),
                ("chain_hash", v["chain_hash"]),
            ]
        ),
        "<p>Recompute it yourself:</p>",
        _pre(v["commands"]["chain_hash"]),
        "<h2>Merkle leaf</h2>",
        _rows([("leaf index", v["leaf"]["index"]), ("leaf data", v["leaf"]["data"]), ("leaf hash", v["leaf"]["hash"])]),
        _pre(v["commands"]["leaf_hash"]),
        "<h2>Inclusion proof</h2>",
        _rows(
            [
                ("tree size", inc["tree_size"]),
                ("root", inc["root"]),
                ("anchored", "yes" if inc["anchored"] else "not yet (proof against the current tree)"),
                ("proof valid", "yes" if inc["valid"] else f"NO: {inc['reason']}"),
            ]
        ),
        _pre("\n".join(inc["proof"]) or "(empty: the tree has one leaf)"),
    ]
    if anchor is not None:
        link = anchor["tx_hash"]
        if anchor["explorer_url"]:
            link = f'<a href="{html.escape(anchor["explorer_url"])}">{html.escape(anchor["tx_hash"])}</a>'
        else:
            link = f"<code>{html.escape(link)}</code>"
        parts += [
            "<h2>Anchor</h2>",
            _rows(
                [
                    ("chain", f"{anchor['network']} ({anchor['chain_id']})"),
                    ("contract", anchor["contract"] or ""),
                    ("checkpoint", anchor["index"]),
                    ("block", anchor["block_number"]),
                ]
            ),
            f"<p>transaction: {link}</p>",
        ]
    parts += [
        "<h2>Verify independently</h2>",
        _pre(v["verify_command"]),
        f'<p>Formulas: <a href="{html.escape(v["methodology_url"])}">methodology</a>.</p>',
    ]
    return "".join(parts)


def methodology_html() -> str:
    m = METHODOLOGY
    d, o, t = m["streams"]["decision"], m["streams"]["order"], m["merkle_tree"]
    return "".join(
        [
            "<h1>Methodology</h1>",
            f"<p>Hash: {html.escape(m['hash'])}. Canonical JSON: {html.escape(m['canonical_json'])}.</p>",
            "<h2>Decision logs (stream agent:&lt;agent_uuid&gt;)</h2>",
            _pre(
                f"payload_hash = {d['payload_hash']}\nchain_hash   = {d['chain_hash']}\n"
                f"entry fields: {', '.join(d['entry_fields'])}"
            ),
            "<h2>Orders (stream order:&lt;order_id&gt;)</h2>",
            _pre(f"chain_hash = {o['chain_hash']}"),
            _pre(f"prev_hash: {m['prev_hash']}\nseq: {m['seq']}"),
            "<h2>The transparency log (RFC 9162 Merkle tree)</h2>",
            _pre("\n".join(f"{k:18} {t[k]}" for k in t)),
            "<h2>Anchoring</h2>",
            _pre(f"{m['anchoring']['contract']}\n{m['anchoring']['checkpoints']}"),
            "<h2>Verifying</h2>",
            _pre(m["verifier"]),
        ]
    )
