"""Load test of `conductor serve` on loopback: CLIENTS concurrent openai clients, each sending
REQUESTS chat completions one after another, to a `conductor serve` subprocess over a simulated
pool with fixed latency (an environment: it measures the server, not any model).

Prints p50/p99 latency divided by the workflow's simulated critical path (the template fanout:
three parallel calls, then an aggregator: 2 x LATENCY), and requests per second. Goal: p99 <= 1.2x.
The unloaded latency of one request, measured first in the same run, is the baseline row.

    python benchmarks/serve.py [--clients 200] [--requests 10] [--latency-ms 200] [--write docs/benchmarks.md]
        [--baseline-tree DIR --rounds 2]   # e.g. DIR from `git archive main | tar -x -C DIR`: before/after rows
        [--py-spy FILE]                    # profile the server under load (`pip install py-spy`)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

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


async def load(url: str, clients: int, requests: int, *, sdk: bool = False) -> tuple[list[float], float, int]:
    """`sdk`: through the openai client (its response parsing costs the client ~15 ms of CPU a
    request, so on a small machine it, not the server, sets the pace); else aiohttp posts of the
    same JSON, each answer checked for its content."""
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=clients * 2),
                                    headers={"Authorization": f"Bearer {KEY}"},
                                    timeout=aiohttp.ClientTimeout(total=120))
    http = httpx.AsyncClient(limits=httpx.Limits(max_connections=clients * 2, max_keepalive_connections=clients * 2),
                             timeout=120, headers={"Authorization": f"Bearer {KEY}"})
    client = openai.AsyncOpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0, http_client=http)
    latencies: list[float] = []
    failures = 0

    async def ask(i: int, j: int) -> None:
        messages = [{"role": "user", "content": f"What is {i} + {j}?"}]
        if sdk:
            await client.chat.completions.create(model="conductor", messages=messages)  # type: ignore[arg-type]
            return
        async with session.post(url + "/v1/chat/completions", json={"model": "conductor", "messages": messages}) as r:
            body = await r.json()
            if r.status != 200 or not body["choices"][0]["message"]["content"]:
                raise RuntimeError(f"HTTP {r.status}: {str(body)[:200]}")

    async def one_client(i: int) -> None:
        nonlocal failures
        for j in range(requests):
            t0 = time.perf_counter()
            try:
                await ask(i, j)
                latencies.append(time.perf_counter() - t0)
            except (openai.APIError, aiohttp.ClientError, RuntimeError):
                failures += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(one_client(i) for i in range(clients)))
    wall = time.perf_counter() - t0
    await http.aclose()
    await session.close()
    return latencies, wall, failures


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--requests", type=int, default=10, help="Requests per client, one after another.")
    ap.add_argument("--latency-ms", type=float, default=200.0, help="Fixed latency of every simulated call.")
    ap.add_argument("--sdk", action="store_true", help="Load through the openai client instead of raw httpx.")
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
            results.append(measure(name, tree, args, py_spy=args.py_spy if tree is None else None))
            print(results[-1].row(critical), file=sys.stderr, flush=True)
    single = results[-1].single
    lines = ["| load | requests | p50 | p99 | p50 ÷ critical path | p99 ÷ critical path | requests/s "
             "| server CPU / request | load average |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
             Measured("1 client (baseline)", single, 5 / sum(single), 0.0, os.getloadavg()[0], 0).row(critical)]
    lines += [r.row(critical) for r in results]
    needed = args.clients / critical  # requests/s for no request to wait behind another
    last = results[-1]
    table = "\n".join(lines) + (
        f"\n\nLoad average: the machine's 1-minute figure at the end of each measurement ({os.cpu_count()} cores). "
        f"Meeting the goal needs {needed:.0f} requests/s, i.e. {last.server_ms * needed / 1000:.2f} cores of "
        f"server CPU alone at this tree's cost per request: the closed loop of {args.clients} clients runs at the "
        f"rate the server's CPU allows, so the ratio measures the CPU this shared machine could give the server.")
    verdict = "met" if pct(last.latencies, 99) <= 1.2 * critical else "NOT met"
    summary = (f"{args.clients} concurrent {'openai' if args.sdk else 'aiohttp'} clients × {args.requests} requests "
               f"each against a `conductor serve` subprocess on loopback; simulated pool (an environment, not model "
               f"results), every call a fixed {args.latency_ms:g} ms; template fanout planner, so the critical path is "
               f"{critical * 1000:.0f} ms. Failures: {sum(r.failures for r in results)}. Goal p99 ≤ 1.2× the critical "
               f"path: **{verdict}**. Machine: {os.cpu_count()} cores, shared with other work while measured.")
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
    load_avg: float
    failures: int
    single: list[float] = field(default_factory=list)

    def row(self, critical: float) -> str:
        p50, p99 = pct(self.latencies, 50), pct(self.latencies, 99)
        cpu = f"{self.server_ms:.2f} ms" if self.server_ms else "–"
        return (f"| {self.name} | {len(self.latencies)} | {p50 * 1000:.0f} ms | {p99 * 1000:.0f} ms | "
                f"{p50 / critical:.2f}× | {p99 / critical:.2f}× | {self.rps:.1f} | {cpu} | "
                f"{self.load_avg:.1f} |")


def measure(name: str, tree: Path | None, args: argparse.Namespace, *, py_spy: Path | None) -> Measured:
    with tempfile.TemporaryDirectory() as d:
        proc, url = start_server(Path(d), args.latency_ms, args.clients, tree)
        try:
            server = psutil.Process(proc.pid)
            single, _, _ = asyncio.run(load(url, 1, 5))
            spy = None
            if py_spy:
                spy = subprocess.Popen([str(Path(sys.executable).with_name("py-spy")), "record", "-p", str(proc.pid),
                                        "-r", "100", "--gil", "--nonblocking", "-f", "raw", "-o", str(py_spy)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1.0)
            cpu0 = server_cpu(server)
            lat, wall, failures = asyncio.run(load(url, args.clients, args.requests, sdk=args.sdk))
            cpu1 = server_cpu(server)
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(timeout=60)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    return Measured(f"{args.clients} clients, {name}", lat, len(lat) / wall, (cpu1 - cpu0) * 1000 / max(1, len(lat)),
                    os.getloadavg()[0], failures, single)

if __name__ == "__main__":
    main()
