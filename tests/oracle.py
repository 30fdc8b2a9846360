"""Client for the Go oracle, cmd/rnic-oracle: expected values for scoreboards.

Hardware testbenches never compute an expected value with a second
implementation in Python; they ask the Go reference stack (iwarp/...) through
this client. The oracle is a long-running process that reads one JSON request
per line on stdin and answers with one JSON line on stdout (see
`go doc ./cmd/rnic-oracle`): octet strings travel as hex, 32-bit values as
numbers, and a bad request gets an "error" field, raised here as OracleError
with the oracle's message.

    path = oracle.build()           # pytest side: go build, cached
    with oracle.Oracle(path) as o:  # cocotb side (path from RNIC_ORACLE)
        o.crc32c(b"123456789")      # {'crc': 3808858755, 'state': ..., 'wire': b'\\x83...'}

build() compiles the oracle into build/oracle/rnic-oracle. Go's build cache
makes an unchanged build take a fraction of a second, and the binary is only
replaced (atomically, under a lock) when its contents change, so concurrent
test runs never see a half-written file. The pytest side calls build() and
hands the path to the simulator in the RNIC_ORACLE environment variable
(ENV_VAR); Oracle() with no path uses that, or builds.
"""

from __future__ import annotations

import atexit
import fcntl
import filecmp
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

REPO_ROOT = Path(__file__).resolve().parent.parent
ORACLE_DIR = REPO_ROOT / "build" / "oracle"
ORACLE_BIN = ORACLE_DIR / "rnic-oracle"
PACKAGE = "./cmd/rnic-oracle"

# Where the pytest side tells the simulator process which binary to run.
ENV_VAR = "RNIC_ORACLE"


_shared: "Oracle | None" = None


def shared() -> "Oracle":
    """One started oracle for the whole simulator process, closed at exit:
    what a cocotb testbench's tests share."""
    global _shared
    if _shared is None:
        _shared = Oracle().start()
        atexit.register(_shared.close)
    return _shared


class OracleError(RuntimeError):
    """The oracle refused a request (the message is the oracle's) or died."""


def build() -> Path:
    """Build cmd/rnic-oracle into build/oracle/rnic-oracle; return its path.

    Uses $GO (default: go). Raises OracleError with the compiler's output if
    the build fails.
    """
    ORACLE_DIR.mkdir(parents=True, exist_ok=True)
    go = os.environ.get("GO", "go")
    with open(ORACLE_DIR / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fd, tmp = tempfile.mkstemp(prefix=".rnic-oracle.", dir=ORACLE_DIR)
        os.close(fd)
        try:
            try:
                proc = subprocess.run(
                    [go, "build", "-o", tmp, PACKAGE],
                    cwd=REPO_ROOT,
                    capture_output=True,
                    text=True,
                )
            except FileNotFoundError as e:
                raise OracleError(f"cannot run {go!r} to build the oracle: {e}") from e
            if proc.returncode != 0:
                raise OracleError(
                    f"go build {PACKAGE} failed:\n{proc.stdout}{proc.stderr}"
                )
            if ORACLE_BIN.exists() and filecmp.cmp(tmp, ORACLE_BIN, shallow=False):
                os.unlink(tmp)
            else:
                os.replace(tmp, ORACLE_BIN)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return ORACLE_BIN


class Oracle:
    """A running rnic-oracle process.

    start() launches it (the constructor does not), request() sends one
    request and returns the response's fields, close() ends it. Also a
    context manager, which starts and closes it.
    """

    def __init__(self, path: str | os.PathLike | None = None):
        if path is None:
            path = os.environ.get(ENV_VAR) or build()
        self.path = Path(path)
        self._proc: subprocess.Popen | None = None
        self._next_id = 0
        self._sent: list[tuple[int, str]] = []  # (id, op) sent, not yet received

    def start(self) -> "Oracle":
        if self._proc is not None:
            raise OracleError("oracle already started")
        self._proc = subprocess.Popen(
            [str(self.path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,  # line buffered
        )
        return self

    def close(self) -> None:
        """End the oracle (EOF on its input) and wait for it."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise OracleError("oracle did not exit at the end of its input")
        finally:
            proc.stdout.close()
        if rc != 0:
            raise OracleError(f"oracle exited with status {rc}")

    def __enter__(self) -> "Oracle":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def request(self, op: str, **fields: Any) -> dict:
        """Send {"op": op, **fields}; return the response without its id.

        Raises OracleError with the oracle's message when it answers with an
        error, or when it is not running or stops answering.
        """
        self.send(op, **fields)
        return self.receive()

    def send(self, op: str, **fields: Any) -> None:
        """Send a request without waiting for its answer; receive() returns
        the answers in the order the requests were sent. Lets the Go side
        work on the next request while the simulator runs (pipelining)."""
        if self._proc is None:
            raise OracleError("oracle not started")
        self._next_id += 1
        self._sent.append((self._next_id, op))
        line = json.dumps({"op": op, "id": self._next_id, **fields}, separators=(",", ":"))
        try:
            self._proc.stdin.write(line + "\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise OracleError(f"oracle {self.path} is gone: {e}") from e

    def receive(self) -> dict:
        """The answer to the oldest request sent and not yet received,
        without its id; OracleError as for request()."""
        if not self._sent:
            raise OracleError("no request outstanding")
        req_id, op = self._sent.pop(0)
        try:
            reply = self._proc.stdout.readline()
        except (BrokenPipeError, OSError) as e:
            raise OracleError(f"oracle {self.path} is gone: {e}") from e
        if not reply:
            raise OracleError(
                f"oracle {self.path} exited (status {self._proc.poll()}) "
                f"without answering {op!r}"
            )
        resp = json.loads(reply)
        if resp.pop("id", None) != req_id:
            raise OracleError(f"oracle answered out of turn: {reply!r}")
        if "error" in resp:
            raise OracleError(resp["error"])
        return resp

    # --- CRC32c (cmd/rnic-oracle/crc.go) -----------------------------------
    #
    # The state is the running CRC, as hw/rtl/crc32c.v keeps it: init starts
    # from the empty message; a state resumes (state=None means init).

    def crc32c(self, data: bytes, state: int | None = None) -> dict:
        """CRC32c of data, from scratch or resumed from state.

        Returns {'crc': int, 'state': int (== crc), 'wire': 4 bytes, MPA
        wire order}.
        """
        resp = self.request("crc32c", data=bytes(data).hex(), **_start(state))
        resp["wire"] = bytes.fromhex(resp["wire"])
        return resp

    def crc32c_segments(
        self, segments: Iterable[bytes], state: int | None = None
    ) -> dict:
        """Running CRC32c after each segment: {'states': [int], 'crc', 'state', 'wire'}."""
        resp = self.request(
            "crc32c_segments",
            segments=[bytes(s).hex() for s in segments],
            **_start(state),
        )
        resp["wire"] = bytes.fromhex(resp["wire"])
        return resp

    # --- MPA framing (cmd/rnic-oracle/mpa.go) ------------------------------

    def mpa_fpdus(
        self, ulpdus: Iterable[bytes], markers: bool = False, base: int = 0, crc: bool = True
    ) -> list[dict]:
        """FPDUs for ULPDUs framed back to back from a new MPA Framer.

        Returns one dict per FPDU: {'seq', 'wire': bytes, 'crc_len', 'crc'},
        where the CRC covers wire[:crc_len] (markers and pad included). With
        crc=False the CRC field is zero, as a Framer with CRCs off sends it.
        """
        resp = self.request(
            "mpa_fpdus", ulpdus=[bytes(u).hex() for u in ulpdus], markers=markers,
            base=base, crc=crc,
        )
        fpdus = resp["fpdus"]
        for f in fpdus:
            f["wire"] = bytes.fromhex(f["wire"])
        return fpdus

    def mpa_receive(
        self, stream: bytes, markers: bool = False, base: int = 0, crc: bool = True
    ) -> dict:
        """What iwarp/mpa's in-order Receiver makes of a connection's stream
        (the octets from base on): {'ulpdus': [(seq, bytes)], 'mpa_error':
        None or {'code', 'seq'}, 'next'}: the ULPDUs it delivered, with the
        sequence number of each one's ULPDU_Length field, the MPA error
        (RFC 5044 8) that stopped it and where, and the next octet it wants.
        """
        resp = self.request("mpa_receive", stream=bytes(stream).hex(), markers=markers,
                            base=base, crc=crc)
        resp["ulpdus"] = [(u["seq"], bytes.fromhex(u["ulpdu"])) for u in resp["ulpdus"]]
        return resp

    def mpa_ooo(
        self, stream: bytes, segments: Iterable[tuple[int, int] | tuple[int, int, int]],
        markers: bool = False, base: int = 0, crc: bool = True,
    ) -> list[dict]:
        """What iwarp/mpa's OOOReceiver places out of order from each of
        several segments of a connection's stream, taken alone.

        segments: (seq, len) or (seq, len, next): the octets of the stream
        at seq, arriving at a receiver that has taken the stream in order up
        to next (default base). Returns, per segment, {'placed': [(seq,
        bytes)], 'delivered': [seq], 'mpa_error'}: the ULPDUs placed (with
        the sequence number of their ULPDU_Length fields), in placement
        order, the FPDUs delivered, and the error that stopped the receiver.
        """
        segs = []
        for s in segments:
            d = {"seq": s[0] & 0xFFFFFFFF, "len": s[1]}
            if len(s) > 2:
                d["next"] = s[2] & 0xFFFFFFFF
            segs.append(d)
        resp = self.request("mpa_ooo", stream=bytes(stream).hex(), markers=markers, base=base,
                            crc=crc, segments=segs)
        out = resp["results"]
        for r in out:
            r["placed"] = [(u["seq"], bytes.fromhex(u["ulpdu"])) for u in r["placed"]]
        return out

    # --- DDP/RDMAP transmit (cmd/rnic-oracle/ddp.go) ------------------------

    def rdmap_segments(
        self,
        opcode: int,
        mulpdu: int,
        *,
        payload: bytes = b"",
        rr: Mapping[str, int] | None = None,
        stag: int = 0,
        to: int = 0,
        msn: int = 0,
        inv_stag: int = 0,
    ) -> dict:
        """The DDP Segments (ULPDUs) iwarp/rdmap cuts one RDMAP message into.

        The fields are those of hw/rtl/ddp_tx.v's descriptor; a Read Request
        (opcode 1) takes rr = {sink_stag, sink_to, size, src_stag, src_to}
        instead of a payload. Returns {'segments': [bytes], 'refused': None},
        or {'segments': [], 'refused': "<the Go stack's error>"} when the Go
        stack refuses the message (a refusal is an answer, not an
        OracleError).
        """
        fields: dict[str, Any] = {
            "opcode": opcode,
            "mulpdu": mulpdu,
            "stag": stag,
            "to": to,
            "msn": msn,
            "inv_stag": inv_stag,
        }
        if rr is None:
            fields["payload"] = bytes(payload).hex()
        else:
            fields["rr"] = dict(rr)
        resp = self.request("rdmap_segments", **fields)
        return {
            "segments": [bytes.fromhex(h) for h in resp.get("segments", [])],
            "refused": resp.get("refused"),
        }


def _start(state: int | None) -> Mapping[str, Any]:
    return {} if state is None else {"init": False, "state": state}
