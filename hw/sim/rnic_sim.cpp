// rnic-sim: the device top (hw/rtl/rnic_dev.v), verilated, as a process the
// driver starts (driver/simdev). docs/device.md, "The simulated device",
// is the protocol; this file is its device side.
//
// The driver talks over one Unix stream socket: inherited as a descriptor
// (--fd N, the driver's socketpair) or accepted once on a path (--listen
// PATH, to attach a driver to a device started by hand, e.g. under a
// debugger). Host memory is a file both sides map (--mem-fd N, a memfd the
// driver made, --mem-size octets): the device's DMA will be a copy into
// it (no DMA yet: the top has the BAR and the admin commands only).
//
// The clock runs while the device serves a request: an MMIO access runs
// the clocks its AXI4-Lite handshakes take, RUN runs a given number. In
// between, the process sleeps in read(2). --fst FILE writes every clock's
// signals as an FST waveform (GTKWave, Surfer). SIGINT or SIGTERM, or the
// driver closing the socket, stops the process cleanly: the waveform is
// closed and the clock count printed.
//
// Exit status: 0 on a clean stop, 1 on a protocol error (named on stderr),
// 2 on bad arguments.

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "Vrnic_dev.h"
#include "verilated.h"
#include "verilated_fst_c.h"

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
};

constexpr uint32_t PROTOCOL_VERSION = 1;
constexpr uint32_t MAX_PAYLOAD = 1u << 20;
// An AXI4-Lite access that takes longer than this is a hung device.
constexpr int MMIO_TIMEOUT_CLOCKS = 1000;
constexpr uint32_t RESP_TIMEOUT = 4;

volatile sig_atomic_t g_stop = 0;

void on_signal(int) { g_stop = 1; }

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "rnic-sim: %s\n"
                 "usage: rnic-sim (--fd N | --listen PATH) [--mem-fd N --mem-size OCTETS] [--fst FILE]\n"
                 "  --fd N          the driver's end of a socketpair, inherited as descriptor N\n"
                 "  --listen PATH   accept one driver on a Unix socket at PATH instead\n"
                 "  --mem-fd N      host memory: a file (memfd) the driver maps too\n"
                 "  --mem-size S    its size in octets\n"
                 "  --fst FILE      write an FST waveform of every clock to FILE\n"
                 "The driver (driver/simdev) starts this process; see docs/device.md.\n",
                 why);
    std::exit(2);
}

class Device {
public:
    explicit Device(const char* fst) : ctx_(new VerilatedContext), top_(new Vrnic_dev(ctx_.get())) {
        if (fst) {
            ctx_->traceEverOn(true);
            trace_.reset(new VerilatedFstC);
            top_->trace(trace_.get(), 99);
            trace_->open(fst);
        }
        top_->clk = 0;
        top_->rst = 1;
        idle_inputs();
        top_->eval();
        for (int i = 0; i < 16; i++) tick();
        top_->rst = 0;
        top_->eval();
        clocks_ = 0;
    }

    ~Device() {
        top_->final();
        if (trace_) trace_->close();
    }

    uint64_t clocks() const { return clocks_; }

    // One clock: the inputs set before it are what the rising edge samples.
    void tick() {
        top_->clk = 0;
        top_->eval();
        dump();
        top_->clk = 1;
        top_->eval();
        dump();
        clocks_++;
    }

    void run(uint64_t n) {
        for (uint64_t i = 0; i < n && !g_stop; i++) tick();
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
            tick();
            if (aw) top_->s_axil_awvalid = 0;
            if (w) top_->s_axil_wvalid = 0;
            if (b) {
                idle_inputs();
                return resp;
            }
        }
        idle_inputs();
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
                idle_inputs();
                *value = data;
                return resp;
            }
        }
        idle_inputs();
        *value = 0;
        return RESP_TIMEOUT;
    }

private:
    void idle_inputs() {
        top_->s_axil_awvalid = 0;
        top_->s_axil_wvalid = 0;
        top_->s_axil_bready = 0;
        top_->s_axil_arvalid = 0;
        top_->s_axil_rready = 0;
    }

    void dump() {
        if (trace_) trace_->dump(time_);
        time_ += 2;  // two half periods of 2 ns: a 4 ns clock in the viewer
    }

    std::unique_ptr<VerilatedContext> ctx_;
    std::unique_ptr<Vrnic_dev> top_;
    std::unique_ptr<VerilatedFstC> trace_;
    uint64_t clocks_ = 0;
    uint64_t time_ = 0;
};

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
        else if (a == "-h" || a == "--help") usage("the simulated RNIC device");
        else usage(("unknown argument " + a).c_str());
    }
    if ((fd < 0) == (listen_path == nullptr)) usage("give exactly one of --fd and --listen");
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
    if (listen_path) fd = accept_one(listen_path);

    Device dev(fst);
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
        case MSG_BYE:
            why = "the driver said goodbye: " + std::string(payload.begin(), payload.end());
            g_stop = 2;
            break;
        default:
            why = "unknown message type " + std::to_string(type);
            rc = 1;
        }
    }
    if (g_stop == 1) why = "stopped by a signal";
    if (rc) {
        std::vector<uint8_t> bye(why.begin(), why.end());
        send(fd, MSG_BYE, bye);
        std::fprintf(stderr, "rnic-sim: protocol error: %s\n", why.c_str());
    } else {
        std::fprintf(stderr, "rnic-sim: %s; %llu clocks\n", why.c_str(), (unsigned long long)dev.clocks());
    }
    ::close(fd);
    if (mem) munmap(mem, size_t(mem_size));
    return rc;
}
