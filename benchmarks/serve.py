"""Load test of `conductor serve` on loopback over a simulated pool (p99 goal: 1.2x the critical path).

CLIENTS concurrent clients, each sending REQUESTS chat completions one after another, to a
`conductor serve` subprocess over a simulated pool with fixed latency (an environment: it
measures the server, not any model). Prints p50/p99 latency divided by the workflow's simulated
critical path (the template fanout: three parallel calls, then an aggregator: 2 x LATENCY),
requests per second, and the CPU per request of the server (with its children) and of the load
generator. The unloaded latency of one request, measured first in the same run, is the baseline
row. The default load generator is a minimal keep-alive HTTP/1.1 client (0.07 ms of CPU a
request against aiohttp's 0.2 ms): on a 2-core machine it shares the CPU with the server.

    python benchmarks/serve.py [--clients 200] [--requests 10] [--latency-ms 200] [--client raw aiohttp]
        [--servers 1 2] [--sweep 50 100] [--write docs/benchmarks.md]
        [--baseline-tree DIR --rounds 2]   # e.g. DIR from `git archive main | tar -x -C DIR`: before/after rows
        [--py-spy FILE]                    # profile the server under load (`pip install py-spy`)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp  # installed with datasets (fsspec[http]): the lightest async HTTP client here
import httpx
import openai
import psutil  # installed with accelerate: CPU seconds of the server process

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.report import write_section  # noqa: E402
from server.running import free_port  # noqa: E402

KEY = "sk-bench-serve"
POOL = """name: bench-fixed-latency
workers:
{workers}
"""
WORKER = """  - id: sim-{i}
    provider: simulated
    model: sim-{i}
    prices: {{input: 1.0, output: 5.0}}
    concurrency: 10000
    options:
      skills: {{math: 0.7, choice: 0.7, freeform: 0.5, code: 0.5}}
      latency_ms: {{median: {ms}, sigma: 0}}
      output_tokens: {{median: 300, sigma: 0}}
"""


def start_server(tmp: Path, latency_ms: float, clients: int,
                 tree: Path | None = None) -> tuple[subprocess.Popen[bytes], str]:
    pool = tmp / "pool.yaml"
    pool.write_text(POOL.format(workers="".join(WORKER.format(i=i, ms=latency_ms) for i in range(3))))
    port = free_port()
    env = os.environ | {"CONDUCTOR_SERVE_API_KEYS": KEY, "CONDUCTOR_HOME": str(tmp / "home")}
    if tree is not None:  # that tree's packages first on the path: its server/, conductor/, warehouse/
        env["PYTHONPATH"] = str(tree.resolve())
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("conductor")), "serve", "--pool", str(pool), "--port", str(port),
         "--rpm", "1000000", "--burst", "100000", "--concurrency-per-key", str(clients * 2), "--no-access-log"],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp / "serve.log", "wb"))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health").status_code == 200:
                return proc, url
        except httpx.TransportError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit(f"server did not start: {(tmp / 'serve.log').read_text()[-2000:]}")


class RawClient:
    """One keep-alive HTTP/1.1 connection speaking just enough of the protocol for this test:
    a prebuilt request, the status line, Content-Length, the body (uvicorn always sends a length
    for a JSON response). Far less CPU per request than aiohttp or the openai client, so on a
    2-core machine the load generator takes less of the CPU the server needs."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(b"POST %s HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\n"
                          b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                          % (path.encode(), self.host.encode(), self.port, KEY.encode(), len(body), body))
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            at = head.lower().find(b"\r\ncontent-length:")
            if at < 0:
                raise ConnectionError(f"HTTP {status} without Content-Length")
            length = int(head[at + 17:head.index(b"\r\n", at + 2)])
            return status, await self.reader.readexactly(length)
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            self.close()
            raise

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def load(urls: list[str], clients: int, requests: int, *, client: str = "raw") -> tuple[list[float], float, int, float]:
    """`client`: "raw" (RawClient, the default), "aiohttp" or "openai" (the SDK: its response
    parsing costs ~15 ms of CPU a request, so on a small machine it, not the server, sets the
    pace). Client i talks to `urls[i % len(urls)]`. Every answer is checked for its content.
    Returns latencies, wall seconds, failures and the load generator's own CPU seconds."""
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients * 2),
                                    headers={"Authorization": f"Bearer {KEY}"},
                                    timeout=aiohttp.ClientTimeout(total=120))
    http = httpx.AsyncClient(limits=httpx.Limits(max_connections=clients * 2, max_keepalive_connections=clients * 2),
                             timeout=120, headers={"Authorization": f"Bearer {KEY}"})
    sdks = [openai.AsyncOpenAI(base_url=u + "/v1", api_key=KEY, max_retries=0, http_client=http) for u in urls]
    latencies: list[float] = []
    failures = 0

    def check(status: int, body: Any) -> None:
        if status != 200 or not body["choices"][0]["message"]["content"]:
            raise RuntimeError(f"HTTP {status}: {str(body)[:200]}")

    async def ask(raw: RawClient, i: int, j: int) -> None:
        messages = [{"role": "user", "content": f"What is {i} + {j}?"}]
        url = urls[i % len(urls)]
        if client == "openai":
            await sdks[i % len(sdks)].chat.completions.create(model="conductor", messages=messages)  # type: ignore[arg-type]
        elif client == "aiohttp":
            async with session.post(url + "/v1/chat/completions", json={"model": "conductor", "messages": messages}) as r:
                check(r.status, await r.json())
        else:
            status, body = await raw.post("/v1/chat/completions",
                                          json.dumps({"model": "conductor", "messages": messages}).encode())
            check(status, json.loads(body))

    async def one_client(i: int) -> None:
        nonlocal failures
        host, _, port = urls[i % len(urls)].removeprefix("http://").partition(":")
        raw = RawClient(host, int(port))
        for j in range(requests):
            t0 = time.perf_counter()
            try:
                await ask(raw, i, j)
                latencies.append(time.perf_counter() - t0)
            except (openai.APIError, aiohttp.ClientError, OSError, asyncio.IncompleteReadError, RuntimeError,
                    ValueError, KeyError):
                failures += 1
        raw.close()

    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one_client(i) for i in range(clients)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    await http.aclose()
    await session.close()
    return latencies, wall, failures, cpu


def server_cpu(server: psutil.Process) -> float:
    """CPU seconds of the server process and its children (the staging process)."""
    total = 0.0
    for p in [server, *server.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def run_async(coro: Any) -> Any:
    """The load generator's event loop: uvloop (installed with uvicorn[standard]) when present."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)
    return uvloop.run(coro)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=200, help="Concurrent clients (a closed loop: each waits for "
                                                              "its answer before it sends again).")
    ap.add_argument("--requests", type=int, default=10, help="Requests per client, one after another.")
    ap.add_argument("--latency-ms", type=float, default=200.0, help="Fixed latency of every simulated call.")
    ap.add_argument("--client", nargs="+", choices=["raw", "aiohttp", "openai"], default=["raw"],
                    help="Load generator(s): raw (a minimal keep-alive HTTP/1.1 client: the least CPU), aiohttp, or "
                         "openai (the SDK); several are measured one after another in each round.")
    ap.add_argument("--servers", type=int, nargs="+", default=[1],
                    help="Also measure N independent `conductor serve` processes, the clients split evenly between "
                         "them (what N workers behind a balancer would do; this tree only).")
    ap.add_argument("--sweep", type=int, nargs="*", default=[],
                    help="Also measure this tree with these client counts (how the tail grows with the load).")
    ap.add_argument("--write", type=Path, help="Write the figures into this markdown file's section.")
    ap.add_argument("--py-spy", type=Path, help="Record the server under load with py-spy into this file "
                                                "(collapsed stacks; `pip install py-spy`).")
    ap.add_argument("--baseline-tree", type=Path,
                    help="Also measure a server run from this source tree (e.g. `git archive main | tar -x -C DIR`), "
                         "alternating with this one, as the before row.")
    ap.add_argument("--rounds", type=int, default=1, help="Alternations of baseline tree and this tree.")
    args = ap.parse_args()
    critical = 2 * args.latency_ms / 1000
    trees: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.baseline_tree:
        trees.insert(0, (f"before ({args.baseline_tree.name})", args.baseline_tree))
    results: list[Measured] = []
    for _ in range(args.rounds):
        for name, tree in trees:
            for client in args.client:
                results.append(measure(name, tree, client, args, py_spy=args.py_spy if tree is None else None))
                print(results[-1].row(critical), file=sys.stderr, flush=True)
    extra = [(n, args.clients) for n in args.servers if n != 1] + [(1, c) for c in args.sweep]
    for servers, clients in extra:
        results.append(measure("this tree", None, args.client[0], args, py_spy=None, servers=servers,
                               clients=clients))
        print(results[-1].row(critical), file=sys.stderr, flush=True)
    main_rows = [r for r in results if r.clients == args.clients and r.servers == 1]
    single = results[-1].single
    lines = ["| load | requests | p50 | p99 | p50 ÷ critical path | p99 ÷ critical path | requests/s "
             "| server CPU / request | load generator CPU / request | load average |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
             Measured("1 client (baseline)", single, 5 / sum(single), 0.0, 0.0, os.getloadavg()[0], 0).row(critical)]
    lines += [r.row(critical) for r in results]
    needed = args.clients / critical  # requests/s for no request to wait behind another
    last = next(r for r in reversed(main_rows)
                if r.name == f"{args.clients} clients, this tree, {args.client[0]} client")
    budget_ms = 0.2 * critical * 1000  # what p99 <= 1.2x leaves for waiting
    table = "\n".join(lines) + (
        f"\n\nLoad average: the machine's 1-minute figure at the end of each measurement ({os.cpu_count()} cores). "
        f"Meeting the goal needs {needed:.0f} requests/s: at this tree's costs ({last.server_ms:.2f} ms and "
        f"{last.client_ms:.2f} ms a request), {last.server_ms * needed / 1000:.2f} of a core for the server's one event "
        f"loop and {last.client_ms * needed / 1000:.2f} for the load generator. Throughput is not all: every call "
        f"takes exactly {args.latency_ms:g} ms, so the clients move in step and each round of {args.clients} requests "
        f"reaches the server at once; the last of a round waits for the CPU of all before it, so p99 ≈ critical path "
        f"+ clients × server CPU per request ÷ the share of a core the server gets. Within the goal's "
        f"{budget_ms:.0f} ms that needs ≤ {budget_ms / args.clients:.2f} ms of CPU per request with a whole core "
        f"free for the server ({args.clients} × {last.server_ms:.2f} ms = {args.clients * last.server_ms:.0f} ms "
        f"here), or the round split over processes and cores (the `server processes` row, which needs the second "
        f"core free), or fewer clients per process (the sweep rows).")
    verdict = "met" if pct(last.latencies, 99) <= 1.2 * critical else "NOT met"
    summary = (f"{args.clients} concurrent clients ({', '.join(args.client)}) × {args.requests} requests "
               f"each against a `conductor serve` subprocess on loopback; simulated pool (an environment, not model "
               f"results), every call a fixed {args.latency_ms:g} ms; template fanout planner, so the critical path is "
               f"{critical * 1000:.0f} ms. Failures: {sum(r.failures for r in results)}. Goal p99 ≤ 1.2× the critical "
               f"path (this tree's last {args.clients}-client row with the {args.client[0]} load generator, one server): **{verdict}**. Machine: {os.cpu_count()} cores, shared with other work while "
               f"measured.")
    print(summary + "\n\n" + table)
    if args.write:
        write_section(args.write, "serve", "conductor serve: load on loopback (`benchmarks/serve.py`)",
                      summary + "\n\n" + table)


@dataclass
class Measured:
    name: str
    latencies: list[float]
    rps: float
    server_ms: float
    client_ms: float
    load_avg: float
    failures: int
    single: list[float] = field(default_factory=list)
    clients: int = 0
    servers: int = 1

    def row(self, critical: float) -> str:
        p50, p99 = pct(self.latencies, 50), pct(self.latencies, 99)
        cpu = f"{self.server_ms:.2f} ms" if self.server_ms else "–"
        client = f"{self.client_ms:.2f} ms" if self.client_ms else "–"
        return (f"| {self.name} | {len(self.latencies)} | {p50 * 1000:.0f} ms | {p99 * 1000:.0f} ms | "
                f"{p50 / critical:.2f}× | {p99 / critical:.2f}× | {self.rps:.1f} | {cpu} | {client} | "
                f"{self.load_avg:.1f} |")


def measure(name: str, tree: Path | None, client: str, args: argparse.Namespace, *, py_spy: Path | None,
            servers: int = 1, clients: int | None = None) -> Measured:
    clients = clients or args.clients
    with tempfile.TemporaryDirectory() as d:
        started = []
        try:
            for n in range(servers):
                (Path(d) / str(n)).mkdir()
                started.append(start_server(Path(d) / str(n), args.latency_ms, clients, tree))
            urls = [url for _, url in started]
            procs = [psutil.Process(proc.pid) for proc, _ in started]
            single, _, _, _ = run_async(load(urls[:1], 1, 5, client=client))
            spy = None
            if py_spy:
                spy = subprocess.Popen([str(Path(sys.executable).with_name("py-spy")), "record", "-p",
                                        str(started[0][0].pid), "-r", "400", "--gil", "-f", "raw", "-o", str(py_spy)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1.0)
            cpu0 = sum(server_cpu(p) for p in procs)
            lat, wall, failures, client_cpu = run_async(load(urls, clients, args.requests, client=client))
            cpu1 = sum(server_cpu(p) for p in procs)
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(timeout=60)
        finally:
            for proc, _ in started:
                proc.terminate()
                proc.wait(timeout=60)
    n = max(1, len(lat))
    label = f"{clients} clients, {name}, {client} client" + (f", {servers} server processes" if servers > 1 else "")
    return Measured(label, lat, len(lat) / wall, (cpu1 - cpu0) * 1000 / n, client_cpu * 1000 / n,
                    os.getloadavg()[0], failures, single, clients, servers)


if __name__ == "__main__":
    main()
