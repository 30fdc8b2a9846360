// rnic-sim: the device top (hw/rtl/rnic_dev.v), verilated, as a process the
// driver starts (driver/simdev). docs/device.md, "The simulated device",
// is the protocol; this file is its device side.
//
// The driver talks over one Unix stream socket: inherited as a descriptor
// (--fd N, the driver's socketpair) or accepted once on a path (--listen
// PATH, to attach a driver to a device started by hand, e.g. under a
// debugger). Host memory is a file both sides map (--mem-fd N, a memfd the
// driver made, --mem-size octets): the device's DMA (its AXI4 master,
// m_axi) is served from it by HostMem below, an AXI4 slave that answers a
// read burst --mem-latency clocks after its address (default 64) at one
// beat a clock and writes with the byte strobes; an access outside the
// memory is answered DECERR and touches nothing. The network seam is the
// device's s_net/m_net streams: SEG_IN messages queue and are offered one
// frame a segment; every m_net frame goes back as SEG_OUT. Interrupt
// messages (m_irq) go back as IRQ.
//
// The clock runs while the device has something to do: while it is not
// idle (its idle output), while a DMA burst, a segment or an answer is in
// flight, while an MMIO access is served, and for RUN's clocks. Running,
// it looks at the socket every 64 clocks; idle, it sleeps in read(2).
// --lockstep runs it only while a request is served, so that a sequence
// of requests meets the device in the same state on every run.
// STAMPS asks for a STAMP message at each MMIO write, network frame's
// first and last beat and DMA write burst, with the clock it happened at
// (latency measurements: driver/simdev/latency_test.go). WRITES asks for
// a WROTE message with the address and octets of every run of octets a
// DMA write burst puts into host memory (the sim-versus-model mirror,
// driver/mirror, compares them with the model's).
// --fst FILE writes every clock's signals as an FST waveform (GTKWave,
// Surfer). SIGINT or SIGTERM, or the driver closing the socket, stops the
// process cleanly: the waveform is closed and the clock count printed.
//
// Exit status: 0 on a clean stop, 1 on a protocol error (named on stderr),
// 2 on bad arguments.

#include <cerrno>
#include <csignal>
#include <deque>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "Vrnic_dev.h"
#include "flash_model.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_fst_c.h"
#endif

namespace {

// Message types (docs/device.md). Every message is {u32 type, u32 length,
// payload of length octets}, little-endian.
enum MsgType : uint32_t {
    MSG_HELLO = 0,       // device -> driver, first: u32 protocol, u32 BAR size, u64 memory size
    MSG_MMIO_WRITE = 1,  // driver -> device: u32 offset, u32 value (no answer unless it fails)
    MSG_MMIO_READ = 2,   // driver -> device: u32 offset
    MSG_MMIO_DATA = 3,   // device -> driver: u32 value, u32 AXI response
    MSG_IRQ = 4,         // device -> driver: u32 vector
    MSG_SEG_IN = 5,      // driver -> device: u16 qpn, u32 seq, octets
    MSG_SEG_OUT = 6,     // device -> driver: u16 qpn, u32 seq, octets
    MSG_RUN = 7,         // driver -> device: u64 clocks (0: none, just answer)
    MSG_STATUS = 8,      // device -> driver: u64 clocks run since reset
    MSG_BYE = 9,         // either: a reason, as text
    MSG_MMIO_ERR = 10,   // device -> driver: u32 1 write | 2 read, u32 offset, u32 response (4: timeout)
    MSG_STAMPS = 11,     // driver -> device: u32 1 on | 0 off (STAMP messages from now on)
    MSG_STAMP = 12,      // device -> driver: u32 kind, u32 a, u64 b, u64 clock
    MSG_WRITES = 13,     // driver -> device: u32 1 on | 0 off (WROTE messages from now on)
    MSG_WROTE = 14,      // device -> driver: u64 address, the octets a DMA write burst wrote there
    MSG_FLASH_CUT = 15,  // driver -> device: u32 n, u32 permille, u32 seed (cut power in the n-th flash program/erase from now)
    MSG_FLASH_STATS = 16,  // driver -> device (answered by FLASH_INFO)
    MSG_FLASH_INFO = 17,   // device -> driver: u64 ops, programs, erases, busy clocks, program octets
};

// What a STAMP marks (docs/device.md): the clock is the count of clocks
// since reset at the edge that took the beat (what STATUS reports right
// after that edge).
enum StampKind : uint32_t {
    STAMP_MMIO_WRITE = 1,  // an MMIO write's data (W) taken: a offset, b value
    STAMP_NET_OUT_FIRST = 2,  // an m_net frame's first beat: a qpn, b seq
    STAMP_NET_OUT_LAST = 3,   // its last beat: a qpn, b seq | octets << 32
    STAMP_NET_IN_FIRST = 4,   // an s_net frame's first beat taken: a qpn, b seq
    STAMP_NET_IN_LAST = 5,    // its last beat taken: a qpn, b seq | octets << 32
    STAMP_DMA_WRITE = 6,      // a DMA write burst's last W beat taken: a octets the burst spans, b address
};

constexpr uint32_t PROTOCOL_VERSION = 4;
constexpr uint32_t MAX_PAYLOAD = 1u << 20;
// An AXI4-Lite access that takes longer than this is a hung device.
constexpr int MMIO_TIMEOUT_CLOCKS = 1000;
constexpr uint32_t RESP_TIMEOUT = 4;

constexpr uint32_t RESP_DECERR = 3;
// The datapath width the device was verilated with (-GDATA_W), given to
// the compiler too (the Makefile passes both).
#ifndef RNIC_DATA_W
#define RNIC_DATA_W 64
#endif
constexpr int DATA_BYTES = RNIC_DATA_W / 8;
static_assert(RNIC_DATA_W == 64 || RNIC_DATA_W == 128 || RNIC_DATA_W == 256 || RNIC_DATA_W == 512, "RNIC_DATA_W");

// Octets of a DATA_W-wide signal, lane 0 first, whether Verilator made it
// an integer (up to 64 bits) or a VlWide (more).
template <typename T>
void get_octets(const T& v, uint8_t* out, int n) {
    for (int i = 0; i < n; i++) out[i] = uint8_t(uint64_t(v) >> (8 * i));
}
template <std::size_t W>
void get_octets(const VlWide<W>& v, uint8_t* out, int n) {
    for (int i = 0; i < n; i++) out[i] = uint8_t(v.m_storage[i / 4] >> (8 * (i % 4)));
}
template <typename T>
void set_octets(T& v, const uint8_t* in, int n) {
    uint64_t x = 0;
    for (int i = 0; i < n; i++) x |= uint64_t(in[i]) << (8 * i);
    v = T(x);
}
template <std::size_t W>
void set_octets(VlWide<W>& v, const uint8_t* in, int n) {
    for (std::size_t w = 0; w < W; w++) v.m_storage[w] = 0;
    for (int i = 0; i < n; i++) v.m_storage[i / 4] |= uint32_t(in[i]) << (8 * (i % 4));
}

volatile sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "rnic-sim: %s\n"
                 "usage: rnic-sim (--fd N | --listen PATH) [--mem-fd N --mem-size OCTETS] [--fst FILE] [--mem-latency N] [--lockstep]\n"
                 "                [--flash FILE] [--flash-tpp CLOCKS] [--flash-tse CLOCKS]\n"
                 "  --fd N          the driver's end of a socketpair, inherited as descriptor N\n"
                 "  --listen PATH   accept one driver on a Unix socket at PATH instead\n"
                 "  --mem-fd N      host memory: a file (memfd) the driver maps too\n"
                 "  --mem-size S    its size in octets\n"
                 "  --fst FILE      write an FST waveform of every clock to FILE\n"
                 "  --mem-latency N clocks from a DMA read's address to its first data (default 64)\n"
                 "  --lockstep      run the clock only while serving a request (MMIO, RUN), never on its own\n"
                 "  --flash FILE    the configuration flash's contents: a 16 MiB file (created erased if missing)\n"
                 "  --flash-tpp N   clocks a page program keeps the flash busy (default 100000: 0.4 ms at 250 MHz)\n"
                 "  --flash-tse N   clocks a sector erase keeps it busy (default 11250000: 45 ms at 250 MHz)\n"
                 "The driver (driver/simdev) starts this process; see docs/device.md.\n",
                 why);
    std::exit(2);
}

// Exactly n octets, or false at end of file; a signal ends the wait.
bool read_full(int fd, void* buf, size_t n) {
    auto* p = static_cast<uint8_t*>(buf);
    while (n > 0) {
        ssize_t r = ::read(fd, p, n);
        if (r == 0) return false;
        if (r < 0) {
            if (errno == EINTR && !g_stop) continue;
            return false;
        }
        p += r;
        n -= size_t(r);
    }
    return true;
}

bool write_full(int fd, const void* buf, size_t n) {
    auto* p = static_cast<const uint8_t*>(buf);
    while (n > 0) {
        ssize_t r = ::write(fd, p, n);
        if (r < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += r;
        n -= size_t(r);
    }
    return true;
}

void put32(std::vector<uint8_t>& b, uint32_t v) {
    for (int i = 0; i < 4; i++) b.push_back(uint8_t(v >> (8 * i)));
}
void put64(std::vector<uint8_t>& b, uint64_t v) {
    for (int i = 0; i < 8; i++) b.push_back(uint8_t(v >> (8 * i)));
}
uint32_t get32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24; }
uint64_t get64(const uint8_t* p) { return get32(p) | uint64_t(get32(p + 4)) << 32; }

bool send(int fd, uint32_t type, const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> m;
    put32(m, type);
    put32(m, uint32_t(payload.size()));
    m.insert(m.end(), payload.begin(), payload.end());
    return write_full(fd, m.data(), m.size());
}

// One AXI4 burst of the device's DMA master, as the host memory serves it.
struct Burst {
    uint32_t id;
    uint64_t addr;
    uint32_t beats, size;  // beats (AxLEN + 1), octets a beat (1 << AxSIZE)
    uint32_t done = 0;     // beats served (reads) or taken (writes)
    uint64_t due = 0;      // reads: the clock the first beat may go
    bool bad = false;      // outside host memory: DECERR, nothing touched
};

// A segment on the network seam.
struct Segment {
    uint16_t qpn;
    uint32_t seq;
    std::vector<uint8_t> octets;
    size_t off = 0;  // s_net: octets offered so far
};

class Device {
public:
    Device(const char* fst, int fd, uint8_t* mem, uint64_t mem_size, uint64_t mem_latency, FlashModel& flash)
        : ctx_(new VerilatedContext), top_(new Vrnic_dev(ctx_.get())), fd_(fd), mem_(mem), mem_size_(mem_size),
          latency_(mem_latency), flash_(flash) {
#if VM_TRACE
        if (fst) {
            ctx_->traceEverOn(true);
            trace_.reset(new VerilatedFstC);
            top_->trace(trace_.get(), 99);
            trace_->open(fst);
        }
#else
        (void)fst;  // main() refuses --fst
#endif
        top_->clk = 0;
        top_->rst = 1;
        idle_inputs();
        top_->eval();
        for (int i = 0; i < 16; i++) tick();
        top_->rst = 0;
        top_->eval();
        // The device sweeps its tables after reset (ddp_rx: 2^max(CONN_W,
        // STAG_AW) clocks, its ready outputs low): run it until it is idle,
        // so the driver meets a device ready for commands, lockstep or not.
        for (int i = 0; i < 1 << 20 && !top_->idle; i++) tick();
        clocks_ = 0;
    }

    ~Device() {
        top_->final();
#if VM_TRACE
        if (trace_) trace_->close();
#endif
    }

    uint64_t clocks() const { return clocks_; }
    bool failed() const { return !failed_.empty(); }
    const std::string& failure() const { return failed_; }

    // Whether the clock must run: the device or the host side has work.
    bool busy() const {
        return !top_->idle || !reads_.empty() || !writes_.empty() || !bresp_.empty() || !net_in_.empty() ||
               net_out_open_ || flash_.busy();
    }

    // An empty segment is offered as one beat without octets (tkeep 0,
    // tlast, tuser's length 0): rnic_rx sends it to the exception ring
    // (reason empty), as the model does.
    // STAMP messages on or off (MSG_STAMPS).
    void set_stamps(bool on) { stamps_ = on; }
    // WROTE messages on or off (MSG_WRITES).
    void set_writes(bool on) { writes_on_ = on; }
    // Report the octets a burst still in progress has written so far:
    // before the device answers anything, every octet in host memory has
    // been reported (the mirror's barrier, driver/mirror).
    void report_writes() { flush_wrote(); }

    void seg_in(uint16_t qpn, uint32_t seq, std::vector<uint8_t> octets) {
        net_in_.push_back(Segment{qpn, seq, std::move(octets)});
    }

    // One clock. The host's inputs are set from its models, the device's
    // outputs sampled before the edge (what the edge takes), then the edge.
    void tick() {
        drive();
        top_->clk = 0;
        top_->eval();
        dump();
        Taken t = sample();
        top_->clk = 1;
        top_->eval();
        dump();
        clocks_++;
        update(t);
        // The flash sees the pins the edge set; the controller sees its
        // answer at the next edge.
        top_->spi_io_i = flash_.step(top_->spi_sck, top_->spi_cs_n, top_->spi_io_o, top_->spi_io_oe);
        if (!flash_.error().empty()) fail("flash: " + flash_.error());
    }

    void run(uint64_t n) {
        for (uint64_t i = 0; i < n && !g_stop && !failed() && !flash_.cut().happened; i++) tick();
    }

    // AXI4-Lite write: AW and W offered together, each dropped once taken,
    // then the B response. Returns the response (RESP_TIMEOUT if the
    // device never answered).
    uint32_t write(uint32_t off, uint32_t value) {
        top_->s_axil_awaddr = off;
        top_->s_axil_awprot = 0;
        top_->s_axil_wdata = value;
        top_->s_axil_wstrb = 0xf;
        top_->s_axil_awvalid = 1;
        top_->s_axil_wvalid = 1;
        top_->s_axil_bready = 1;
        for (int i = 0; i < MMIO_TIMEOUT_CLOCKS; i++) {
            top_->eval();
            bool aw = top_->s_axil_awvalid && top_->s_axil_awready;
            bool w = top_->s_axil_wvalid && top_->s_axil_wready;
            bool b = top_->s_axil_bvalid;
            uint32_t resp = top_->s_axil_bresp;
            if (w) stamp(STAMP_MMIO_WRITE, off, value);
            tick();
            if (aw) top_->s_axil_awvalid = 0;
            if (w) top_->s_axil_wvalid = 0;
            if (b) {
                idle_axil();
                return resp;
            }
        }
        idle_axil();
        return RESP_TIMEOUT;
    }

    uint32_t read(uint32_t off, uint32_t* value) {
        top_->s_axil_araddr = off;
        top_->s_axil_arprot = 0;
        top_->s_axil_arvalid = 1;
        top_->s_axil_rready = 1;
        for (int i = 0; i < MMIO_TIMEOUT_CLOCKS; i++) {
            top_->eval();
            bool ar = top_->s_axil_arvalid && top_->s_axil_arready;
            bool r = top_->s_axil_rvalid;
            uint32_t data = top_->s_axil_rdata, resp = top_->s_axil_rresp;
            tick();
            if (ar) top_->s_axil_arvalid = 0;
            if (r) {
                idle_axil();
                *value = data;
                return resp;
            }
        }
        idle_axil();
        *value = 0;
        return RESP_TIMEOUT;
    }

private:
    // What the edge of one clock takes on each channel.
    struct Taken {
        bool ar = false, aw = false, w = false, r = false, b = false, net_in = false, net_out = false, irq = false;
    };

    static constexpr size_t MAX_BURSTS = 16;  // addresses the host memory accepts ahead

    void idle_axil() {
        top_->s_axil_awvalid = 0;
        top_->s_axil_wvalid = 0;
        top_->s_axil_bready = 0;
        top_->s_axil_arvalid = 0;
        top_->s_axil_rready = 0;
    }

    void idle_inputs() {
        idle_axil();
        top_->m_axi_awready = 0;
        top_->m_axi_wready = 0;
        top_->m_axi_bvalid = 0;
        top_->m_axi_arready = 0;
        top_->m_axi_rvalid = 0;
        top_->s_net_tvalid = 0;
        top_->m_net_tready = 0;
        top_->m_irq_ready = 0;
        top_->spi_io_i = 0xf;
    }

    bool in_mem(uint64_t addr, uint64_t n) const { return mem_ && addr <= mem_size_ && n <= mem_size_ - addr; }

    // The address of beat k of an INCR burst, and its first and last lane.
    static uint64_t beat_addr(const Burst& b, uint32_t k) {
        uint64_t aligned = b.addr & ~uint64_t(b.size - 1);
        return k == 0 ? b.addr : aligned + uint64_t(k) * b.size;
    }

    Burst burst(uint32_t id, uint64_t addr, uint32_t len, uint32_t size) const {
        Burst b{id, addr, len + 1, 1u << size};
        uint64_t end = (addr & ~uint64_t(b.size - 1)) + uint64_t(b.beats) * b.size;
        b.bad = b.size > uint32_t(DATA_BYTES) || !in_mem(addr, end - addr);
        return b;
    }

    void drive() {
        top_->m_axi_arready = reads_.size() < MAX_BURSTS;
        top_->m_axi_awready = writes_.size() < MAX_BURSTS;
        // W beats are taken for a burst whose address came.
        top_->m_axi_wready = !writes_.empty();
        // R: the oldest read burst, once due.
        top_->m_axi_rvalid = 0;
        if (!reads_.empty() && reads_.front().due <= clocks_) {
            Burst& b = reads_.front();
            uint8_t beat[DATA_BYTES] = {};
            if (!b.bad) {
                uint64_t a = beat_addr(b, b.done), lane0 = a & ~uint64_t(DATA_BYTES - 1);
                uint64_t first = a - lane0, last = (a | (b.size - 1)) - lane0;
                std::memcpy(beat + first, mem_ + lane0 + first, last - first + 1);
            }
            set_octets(top_->m_axi_rdata, beat, DATA_BYTES);
            top_->m_axi_rid = b.id;
            top_->m_axi_rresp = b.bad ? RESP_DECERR : 0;
            top_->m_axi_rlast = b.done + 1 == b.beats;
            top_->m_axi_rvalid = 1;
        }
        top_->m_axi_bvalid = !bresp_.empty();
        if (!bresp_.empty()) {
            top_->m_axi_bid = bresp_.front().id;
            top_->m_axi_bresp = bresp_.front().bad ? RESP_DECERR : 0;
        }
        // s_net: the oldest queued segment, a beat at a time.
        top_->s_net_tvalid = 0;
        if (!net_in_.empty()) {
            Segment& g = net_in_.front();
            uint8_t beat[DATA_BYTES] = {};
            size_t n = std::min(g.octets.size() - g.off, size_t(DATA_BYTES));
            std::memcpy(beat, g.octets.data() + g.off, n);
            set_octets(top_->s_net_tdata, beat, DATA_BYTES);
            uint64_t keep = n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
            top_->s_net_tkeep = decltype(top_->s_net_tkeep)(keep);
            top_->s_net_tlast = g.off + n == g.octets.size();
            top_->s_net_tuser = uint64_t(g.qpn) << 48 | uint64_t(g.seq) << 16 | uint64_t(g.octets.size() & 0xffff);
            top_->s_net_tvalid = 1;
        }
        top_->m_net_tready = 1;
        top_->m_irq_ready = 1;
    }

    // The handshakes of this clock, sampled before its edge.
    Taken sample() {
        Taken t;
        t.ar = top_->m_axi_arvalid && top_->m_axi_arready;
        t.aw = top_->m_axi_awvalid && top_->m_axi_awready;
        t.w = top_->m_axi_wvalid && top_->m_axi_wready;
        t.r = top_->m_axi_rvalid && top_->m_axi_rready;
        t.b = top_->m_axi_bvalid && top_->m_axi_bready;
        t.net_in = top_->s_net_tvalid && top_->s_net_tready;
        if (t.net_in && stamps_) {
            const Segment& g = net_in_.front();
            if (g.off == 0) stamp(STAMP_NET_IN_FIRST, g.qpn, g.seq);
            if (g.off + std::min(g.octets.size() - g.off, size_t(DATA_BYTES)) == g.octets.size())
                stamp(STAMP_NET_IN_LAST, g.qpn, g.seq | uint64_t(g.octets.size()) << 32);
        }
        t.net_out = top_->m_net_tvalid && top_->m_net_tready;
        t.irq = top_->m_irq_valid && top_->m_irq_ready;
        if (t.ar) {
            Burst b = burst(top_->m_axi_arid, top_->m_axi_araddr, top_->m_axi_arlen, top_->m_axi_arsize);
            b.due = clocks_ + latency_;
            reads_.push_back(b);
        }
        if (t.aw) writes_.push_back(burst(top_->m_axi_awid, top_->m_axi_awaddr, top_->m_axi_awlen, top_->m_axi_awsize));
        if (t.w) take_w();
        if (t.net_out) take_net_out();
        if (t.irq) {
            std::vector<uint8_t> m;
            put32(m, top_->m_irq_vector);
            out(MSG_IRQ, m);
        }
        return t;
    }

    // One W beat into the oldest write burst (the device sends W in AW
    // order: AXI4 has no write interleaving).
    void take_w() {
        Burst& b = writes_.front();
        if (!b.bad) {
            uint8_t beat[DATA_BYTES], strb[DATA_BYTES];
            get_octets(top_->m_axi_wdata, beat, DATA_BYTES);
            get_octets(top_->m_axi_wstrb, strb, DATA_BYTES / 8);
            uint64_t a = beat_addr(b, b.done), lane0 = a & ~uint64_t(DATA_BYTES - 1);
            uint64_t first = a - lane0, last = (a | (b.size - 1)) - lane0;
            for (uint64_t i = first; i <= last; i++)
                if (strb[i / 8] >> (i % 8) & 1) {
                    mem_[lane0 + i] = beat[i];
                    if (writes_on_) wrote(lane0 + i, beat[i]);
                }
        }
        b.done++;
        bool last = top_->m_axi_wlast;
        if (last != (b.done == b.beats)) {
            fail("the device's W burst at " + hex(b.addr) + " has WLAST on beat " + std::to_string(b.done) + " of " +
                 std::to_string(b.beats));
        }
        if (b.done == b.beats) {
            flush_wrote();
            stamp(STAMP_DMA_WRITE, uint32_t((b.addr & ~uint64_t(b.size - 1)) + uint64_t(b.beats) * b.size - b.addr), b.addr);
            bresp_.push_back(b);
            writes_.pop_front();
        }
    }

    void take_net_out() {
        uint8_t beat[DATA_BYTES], keep[DATA_BYTES / 8 > 0 ? DATA_BYTES / 8 : 1];
        get_octets(top_->m_net_tdata, beat, DATA_BYTES);
        get_octets(top_->m_net_tkeep, keep, DATA_BYTES / 8);
        if (!net_out_open_) {
            uint64_t u = top_->m_net_tuser;
            net_out_ = Segment{uint16_t(u >> 48), uint32_t(u >> 16), {}};
            net_out_open_ = true;
            stamp(STAMP_NET_OUT_FIRST, net_out_.qpn, net_out_.seq);
        }
        for (int i = 0; i < DATA_BYTES; i++)
            if (keep[i / 8] >> (i % 8) & 1) net_out_.octets.push_back(beat[i]);
        if (top_->m_net_tlast) {
            stamp(STAMP_NET_OUT_LAST, net_out_.qpn, net_out_.seq | uint64_t(net_out_.octets.size()) << 32);
            std::vector<uint8_t> m;
            m.push_back(uint8_t(net_out_.qpn));
            m.push_back(uint8_t(net_out_.qpn >> 8));
            put32(m, net_out_.seq);
            m.insert(m.end(), net_out_.octets.begin(), net_out_.octets.end());
            out(MSG_SEG_OUT, m);
            net_out_open_ = false;
        }
    }

    // After the edge: the channels the edge took move on.
    void update(const Taken& t) {
        if (t.r) {
            Burst& b = reads_.front();
            if (++b.done == b.beats) reads_.pop_front();
        }
        if (t.b) bresp_.pop_front();
        if (t.net_in) {
            Segment& g = net_in_.front();
            g.off += std::min(g.octets.size() - g.off, size_t(DATA_BYTES));
            if (g.off == g.octets.size()) net_in_.pop_front();
        }
    }

    void dump() {
#if VM_TRACE
        if (trace_) trace_->dump(time_);
        time_ += 2;  // two half periods of 2 ns: a 4 ns clock in the viewer
#endif
    }

    // One octet a W beat wrote into host memory: runs of consecutive
    // addresses go to the driver as one WROTE message, sent when the run
    // breaks or its burst ends (just after the octets are in memory, as a
    // DMA write's STAMP).
    void wrote(uint64_t addr, uint8_t v) {
        if (!wrote_.empty() && addr != wrote_addr_ + wrote_.size() - 8) flush_wrote();
        if (wrote_.empty()) {
            wrote_addr_ = addr;
            put64(wrote_, addr);
        }
        wrote_.push_back(v);
    }

    void flush_wrote() {
        if (wrote_.empty()) return;
        out(MSG_WROTE, wrote_);
        wrote_.clear();
    }

    // A STAMP of what the coming edge takes (so: clocks_ + 1), if asked.
    void stamp(uint32_t kind, uint32_t a, uint64_t b) {
        if (!stamps_) return;
        std::vector<uint8_t> m;
        put32(m, kind);
        put32(m, a);
        put64(m, b);
        put64(m, clocks_ + 1);
        out(MSG_STAMP, m);
    }

    void out(uint32_t type, const std::vector<uint8_t>& payload) {
        if (!send(fd_, type, payload)) fail("cannot write to the driver");
    }

    void fail(const std::string& why) {
        if (failed_.empty()) failed_ = why;
    }

    static std::string hex(uint64_t v) {
        char b[24];
        std::snprintf(b, sizeof b, "%#llx", (unsigned long long)v);
        return b;
    }

    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vrnic_dev> top_;
#if VM_TRACE
    std::unique_ptr<VerilatedFstC> trace_;
#endif
    int fd_;
    uint8_t* mem_;
    uint64_t mem_size_, latency_;
    FlashModel& flash_;
    uint64_t clocks_ = 0;
    uint64_t time_ = 0;
    std::deque<Burst> reads_, writes_, bresp_;  // addresses taken; B responses owed
    std::deque<Segment> net_in_;
    Segment net_out_{};
    bool net_out_open_ = false;
    bool stamps_ = false;
    bool writes_on_ = false;
    std::vector<uint8_t> wrote_;  // the WROTE message being built: u64 address, octets
    uint64_t wrote_addr_ = 0;
    std::string failed_;
};

int accept_one(const char* path) {
    int ls = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (std::strlen(path) >= sizeof(a.sun_path)) usage("--listen: the path is too long for a Unix socket");
    std::strcpy(a.sun_path, path);
    ::unlink(path);
    if (ls < 0 || ::bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof(a)) < 0 || ::listen(ls, 1) < 0) {
        std::fprintf(stderr, "rnic-sim: cannot listen on %s: %s\n", path, std::strerror(errno));
        std::exit(1);
    }
    std::fprintf(stderr, "rnic-sim: waiting for a driver on %s\n", path);
    int fd = ::accept(ls, nullptr, nullptr);
    ::close(ls);
    ::unlink(path);
    if (fd < 0) {
        std::fprintf(stderr, "rnic-sim: accept on %s: %s\n", path, std::strerror(errno));
        std::exit(g_stop ? 0 : 1);
    }
    return fd;
}

long parse_num(const char* opt, const char* s) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 0);
    if (errno || !end || *end || v < 0) usage((std::string(opt) + ": not a number: " + s).c_str());
    return long(v);
}

}  // namespace

int main(int argc, char** argv) {
    int fd = -1, mem_fd = -1;
    long mem_size = 0;
    const char* listen_path = nullptr;
    const char* fst = nullptr;
    long mem_latency = 64;
    bool lockstep = false;
    const char* flash_path = nullptr;
    long flash_tpp = long(FlashModel::TPP_DEFAULT), flash_tse = long(FlashModel::TSE_DEFAULT);
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&]() -> const char* {
            if (i + 1 >= argc) usage((a + " needs a value").c_str());
            return argv[++i];
        };
        if (a == "--fd") fd = int(parse_num("--fd", val()));
        else if (a == "--listen") listen_path = val();
        else if (a == "--mem-fd") mem_fd = int(parse_num("--mem-fd", val()));
        else if (a == "--mem-size") mem_size = parse_num("--mem-size", val());
        else if (a == "--fst") fst = val();
        else if (a == "--mem-latency") mem_latency = parse_num("--mem-latency", val());
        else if (a == "--lockstep") lockstep = true;
        else if (a == "--flash") flash_path = val();
        else if (a == "--flash-tpp") flash_tpp = parse_num("--flash-tpp", val());
        else if (a == "--flash-tse") flash_tse = parse_num("--flash-tse", val());
        else if (a == "-h" || a == "--help") usage("the simulated RNIC device");
        else usage(("unknown argument " + a).c_str());
    }
    if ((fd < 0) == (listen_path == nullptr)) usage("give exactly one of --fd and --listen");
#if !VM_TRACE
    if (fst) usage("--fst: this build has no tracing (built with SIM_TRACE empty); make sim builds it with");
#endif
    if ((mem_fd < 0) != (mem_size == 0)) usage("--mem-fd and --mem-size go together");

    struct sigaction sa {};
    sa.sa_handler = on_signal;  // no SA_RESTART: a signal ends a blocking read
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    void* mem = nullptr;
    if (mem_fd >= 0) {
        struct stat st {};
        if (fstat(mem_fd, &st) < 0 || st.st_size < mem_size) {
            std::fprintf(stderr, "rnic-sim: --mem-fd %d is not a file of at least %ld octets\n", mem_fd, mem_size);
            return 2;
        }
        mem = mmap(nullptr, size_t(mem_size), PROT_READ | PROT_WRITE, MAP_SHARED, mem_fd, 0);
        if (mem == MAP_FAILED) {
            std::fprintf(stderr, "rnic-sim: cannot map host memory: %s\n", std::strerror(errno));
            return 1;
        }
    }
    FlashModel flash;
    if (std::string e = flash.open(flash_path, uint64_t(flash_tpp), uint64_t(flash_tse)); !e.empty()) {
        std::fprintf(stderr, "rnic-sim: %s\n", e.c_str());
        return 2;
    }
    if (listen_path) fd = accept_one(listen_path);

    Device dev(fst, fd, static_cast<uint8_t*>(mem), uint64_t(mem_size), uint64_t(mem_latency), flash);
    std::vector<uint8_t> hello;
    put32(hello, PROTOCOL_VERSION);
    put32(hello, 1u << 17);  // the BAR's size: rnic_dev's BAR_AW
    put64(hello, uint64_t(mem_size));
    int rc = 0;
    std::string why = "the driver closed the connection";
    if (!send(fd, MSG_HELLO, hello)) {
        why = "cannot write to the driver";
        rc = 1;
    }
    std::vector<uint8_t> payload;
    while (rc == 0 && !g_stop) {
        // While the device has work, the clock runs and the socket is
        // looked at every 64 clocks; idle, the process sleeps on it.
        if (!lockstep && dev.busy()) {
            dev.run(64);
            if (dev.failed()) {
                why = dev.failure();
                rc = 1;
                break;
            }
            if (flash.cut().happened) break;
            pollfd pf{fd, POLLIN, 0};
            if (::poll(&pf, 1, 0) <= 0) continue;
        }
        uint8_t hdr[8];
        if (!read_full(fd, hdr, sizeof hdr)) break;
        uint32_t type = get32(hdr), len = get32(hdr + 4);
        if (len > MAX_PAYLOAD) {
            why = "a message of " + std::to_string(len) + " octets (type " + std::to_string(type) + ")";
            rc = 1;
            break;
        }
        payload.resize(len);
        if (len && !read_full(fd, payload.data(), len)) break;
        const uint8_t* p = payload.data();
        auto want = [&](uint32_t n) {
            if (len == n) return true;
            why = "message type " + std::to_string(type) + " with " + std::to_string(len) + " octets, want " +
                  std::to_string(n);
            rc = 1;
            return false;
        };
        std::vector<uint8_t> out;
        dev.report_writes();
        switch (type) {
        case MSG_MMIO_WRITE: {
            if (!want(8)) break;
            uint32_t off = get32(p), resp = dev.write(off, get32(p + 4));
            if (resp != 0) {
                put32(out, 1);
                put32(out, off);
                put32(out, resp);
                send(fd, MSG_MMIO_ERR, out);
            }
            break;
        }
        case MSG_MMIO_READ: {
            if (!want(4)) break;
            uint32_t v = 0, resp = dev.read(get32(p), &v);
            put32(out, v);
            put32(out, resp);
            send(fd, MSG_MMIO_DATA, out);
            break;
        }
        case MSG_RUN:
            if (!want(8)) break;
            dev.run(get64(p));
            put64(out, dev.clocks());
            send(fd, MSG_STATUS, out);
            break;
        case MSG_SEG_IN:
            if (len < 6 || len > 6 + 0xffff) {
                why = "a SEG_IN message of " + std::to_string(len) + " octets: want 6 + 0..65535";
                rc = 1;
                break;
            }
            dev.seg_in(uint16_t(p[0] | p[1] << 8), get32(p + 2), std::vector<uint8_t>(p + 6, p + len));
            break;
        case MSG_STAMPS:
            if (!want(4)) break;
            dev.set_stamps(get32(p) != 0);
            break;
        case MSG_WRITES:
            if (!want(4)) break;
            dev.set_writes(get32(p) != 0);
            break;
        case MSG_FLASH_CUT:
            if (!want(12)) break;
            flash.arm(get32(p), get32(p + 4), get32(p + 8));
            break;
        case MSG_FLASH_STATS: {
            if (!want(0)) break;
            const FlashModel::Stats& fs = flash.stats();
            put64(out, fs.ops);
            put64(out, fs.programs);
            put64(out, fs.erases);
            put64(out, fs.busy_clocks);
            put64(out, fs.program_octets);
            send(fd, MSG_FLASH_INFO, out);
            break;
        }
        case MSG_BYE:
            why = "the driver said goodbye: " + std::string(payload.begin(), payload.end());
            g_stop = 2;
            break;
        default:
            why = "unknown message type " + std::to_string(type);
            rc = 1;
        }
        if (rc == 0 && dev.failed()) {
            why = dev.failure();
            rc = 1;
        }
        if (flash.cut().happened) break;
    }
    // A power cut ends the process as the power ends a board: the flash
    // file holds what the cut left, the next start is the power-on.
    if (rc == 0 && flash.cut().happened) {
        const FlashModel::Cut& c = flash.cut();
        char b[160];
        std::snprintf(b, sizeof b, "power cut in flash operation %llu (%s at %#x, %u/1000 done)",
                      (unsigned long long)c.op, c.erase ? "sector erase" : "page program", c.addr, c.permille);
        why = b;
        std::vector<uint8_t> bye(why.begin(), why.end());
        send(fd, MSG_BYE, bye);
    }
    flash.sync();
    if (g_stop == 1) why = "stopped by a signal";
    if (rc) {
        std::vector<uint8_t> bye(why.begin(), why.end());
        send(fd, MSG_BYE, bye);
        std::fprintf(stderr, "rnic-sim: protocol error: %s\n", why.c_str());
    } else {
        // The process's CPU time too: clocks per CPU second is the
        // simulator's speed whatever the machine's load.
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        double cpu = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
        std::fprintf(stderr, "rnic-sim: %s; %llu clocks, %.2f s of CPU (%.0f clocks a CPU second)\n", why.c_str(),
                     (unsigned long long)dev.clocks(), cpu, cpu > 0 ? double(dev.clocks()) / cpu : 0.0);
    }
    ::close(fd);
    if (mem) munmap(mem, size_t(mem_size));
    return rc;
}
