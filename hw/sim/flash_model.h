// flash_model.h: the configuration flash of the simulated device, an SPI
// NOR part at the pin level (hw/rtl/spi_flash_ctrl.v drives it; included by
// rnic_sim.cpp). docs/firmware-update.md, "The simulated flash".
//
// The part: a W25Q128JV-like 16 MiB NOR flash, 3-octet addresses, SPI mode
// 0 (sampled on SCK's rising edge, driven after its falling edge), with the
// commands the controller uses and a few it may not: WREN 0x06, WRDI 0x04,
// RDSR 0x05 (status register 1: WIP bit 0, WEL bit 1; repeated while CS#
// stays low), RDID 0x9F (EF 40 18), READ 0x03, FAST READ 0x0B (8 dummy
// clocks), quad output FAST READ 0x6B (8 dummy clocks, data on IO0..IO3),
// PAGE PROGRAM 0x02, quad PAGE PROGRAM 0x32, SECTOR ERASE 0x20 (4 KiB).
// The quad enable bit is taken as set (as the parts shipped with QE = 1).
// Datasheet rules kept: a program or erase needs WEL (set by WREN, cleared
// when the operation ends) and CS# raised after a whole octet; a page
// program wraps within its 256-octet page and only clears bits (new = old
// AND data); while WIP is set every command but RDSR is ignored. Busy
// times are in device clocks (--flash-tpp, --flash-tse); the defaults are
// W25Q128JV's typical tPP 0.4 ms and tSE 45 ms at the device's 250 MHz.
//
// Contents: a file of exactly 16 MiB, mapped shared (--flash FILE; created
// erased, all 0xFF, if missing), so a test reads every octet and the
// contents outlive the process; without --flash, memory of the process.
//
// Power cuts: arm(n, permille, seed) cuts power permille/1000 of the way
// through the n-th program or erase started from then on. A cut program
// has cleared each of its bits with probability permille/1000 (a partly
// programmed page, bits in between included); a cut erase has set each
// octet of its sector to 0xFF with that probability, and left a few octets
// with some bits set and others not (partly erased), the rest as before.
// The seed makes the pattern reproducible. After a cut the part takes no
// more input: cut() says what happened, and the harness ends the process
// (the power is gone); the next start on the same file is the power-on.
//
// Bus checks: a line driven by both the controller and the part at once
// is a protocol error (the harness ends the process naming it).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

class FlashModel {
public:
    static constexpr uint64_t SIZE = 16u << 20;
    static constexpr uint32_t SECTOR = 4096, PAGE = 256;
    // W25Q128JV typical times at 250 MHz (4 ns a clock).
    static constexpr uint64_t TPP_DEFAULT = 100000;    // 0.4 ms
    static constexpr uint64_t TSE_DEFAULT = 11250000;  // 45 ms

    struct Stats {
        uint64_t ops = 0, programs = 0, erases = 0, busy_clocks = 0, program_octets = 0;
    };
    struct Cut {
        bool happened = false;
        uint64_t op = 0;      // its number among the operations since the process started (1-based)
        bool erase = false;
        uint32_t addr = 0;
        uint32_t permille = 0;
    };

    FlashModel() = default;
    FlashModel(const FlashModel&) = delete;
    FlashModel& operator=(const FlashModel&) = delete;
    ~FlashModel() {
        if (mem_) {
            if (fd_ >= 0) msync(mem_, SIZE, MS_SYNC);
            munmap(mem_, SIZE);
        }
        if (fd_ >= 0) ::close(fd_);
    }

    // Open (or create, erased) the backing file, or with path null use
    // memory. Returns an error message, empty on success.
    std::string open(const char* path, uint64_t tpp, uint64_t tse) {
        tpp_ = tpp;
        tse_ = tse;
        if (!path) {
            void* m = mmap(nullptr, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) return std::string("cannot map flash memory: ") + std::strerror(errno);
            mem_ = static_cast<uint8_t*>(m);
            std::memset(mem_, 0xff, SIZE);
            return "";
        }
        fd_ = ::open(path, O_RDWR | O_CREAT, 0644);
        if (fd_ < 0) return std::string("--flash ") + path + ": " + std::strerror(errno);
        struct stat st {};
        if (fstat(fd_, &st) < 0) return std::string("--flash ") + path + ": " + std::strerror(errno);
        bool fresh = st.st_size == 0;
        if (fresh && ftruncate(fd_, off_t(SIZE)) < 0)
            return std::string("--flash ") + path + ": " + std::strerror(errno);
        if (!fresh && uint64_t(st.st_size) != SIZE)
            return std::string("--flash ") + path + ": " + std::to_string(st.st_size) +
                   " octets; the simulated part is 16 MiB (16777216 octets): give a file of that size or a new path";
        void* m = mmap(nullptr, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
        if (m == MAP_FAILED) return std::string("--flash ") + path + ": cannot map: " + std::strerror(errno);
        mem_ = static_cast<uint8_t*>(m);
        if (fresh) std::memset(mem_, 0xff, SIZE);
        return "";
    }

    // Cut power permille/1000 into the n-th program or erase from now (n 0: no cut).
    void arm(uint32_t n, uint32_t permille, uint32_t seed) {
        cut_at_ = n ? stats_.ops + n : 0;
        cut_permille_ = permille > 999 ? 999 : permille;
        cut_seed_ = seed;
    }

    const Stats& stats() const { return stats_; }
    const Cut& cut() const { return cut_; }
    bool busy() const { return busy_left_ > 0; }
    const std::string& error() const { return err_; }
    void sync() {
        if (mem_ && fd_ >= 0) msync(mem_, SIZE, MS_SYNC);
    }

    // The lines the part drives now (after the last step).
    uint8_t io_o() const { return out_o_; }
    uint8_t io_oe() const { return out_oe_; }

    // One device clock, after its edge: the controller's pins as they are
    // now. Returns the IO lines the controller sees (undriven lines read 1:
    // the board's pull-ups).
    uint8_t step(bool sck, bool cs_n, uint8_t o, uint8_t oe) {
        if (cut_.happened) return 0xf;
        if (busy_left_ > 0) {
            stats_.busy_clocks++;
            busy_spent_++;
            if (cut_armed_now_ && busy_spent_ >= cut_clock_) {
                do_cut();
                return 0xf;
            }
            if (--busy_left_ == 0) finish();
        }
        if (cs_n) {
            if (!cs_n_prev_) cs_rise();
            out_oe_ = 0;
        } else {
            if (cs_n_prev_) cs_fall();
            if (sck && !sck_prev_) rise(o);
            if (!sck && sck_prev_) fall();
        }
        cs_n_prev_ = cs_n;
        sck_prev_ = sck;
        if (oe & out_oe_ & 0xf) {
            fail("SPI bus contention: the controller and the flash both drive IO lines " + std::to_string(oe & out_oe_) +
                 " (a mask) during command " + hex8(opcode_));
        }
        uint8_t v = 0;
        for (int i = 0; i < 4; i++) {
            int bit = out_oe_ >> i & 1 ? out_o_ >> i & 1 : (oe >> i & 1 ? o >> i & 1 : 1);
            v |= uint8_t(bit << i);
        }
        return v;
    }

private:
    enum Phase { CMD, ADDR, DUMMY, DIN, DOUT, IGNORE };

    static std::string hex8(uint32_t v) {
        char b[8];
        std::snprintf(b, sizeof b, "0x%02x", v & 0xff);
        return b;
    }

    void fail(const std::string& why) {
        if (err_.empty()) err_ = why;
    }

    uint8_t sr() const { return uint8_t((busy_left_ > 0 ? 1 : 0) | (wel_ ? 2 : 0)); }

    void cs_fall() {
        phase_ = CMD;
        bits_ = 0;
        opcode_ = 0;
        addr_ = 0;
        dummy_ = 0;
        quad_ = false;
        data_.clear();
        cur_ = 0;
        nbits_ = 0;
        out_oe_ = 0;
    }

    // CS# rises: a program or erase command that is whole starts now.
    void cs_rise() {
        out_oe_ = 0;
        if (busy_left_ > 0) return;
        bool whole = nbits_ == 0;  // no octet left half-shifted
        switch (opcode_) {
        case 0x06:
            if (phase_ == DIN && data_.empty() && whole) wel_ = true;
            break;
        case 0x04:
            wel_ = false;
            break;
        case 0x02:
        case 0x32:
            if (phase_ == DIN && whole && !data_.empty() && wel_) start(false);
            break;
        case 0x20:
            if (phase_ == DIN && whole && data_.empty() && wel_) start(true);
            break;
        default:
            break;
        }
        phase_ = IGNORE;
    }

    void start(bool erase) {
        stats_.ops++;
        op_erase_ = erase;
        op_addr_ = erase ? addr_ & ~(SECTOR - 1) : addr_;
        if (erase) {
            stats_.erases++;
            busy_left_ = tse_ ? tse_ : 1;
        } else {
            stats_.programs++;
            stats_.program_octets += data_.size();
            busy_left_ = tpp_ ? tpp_ : 1;
            prog_ = data_;
        }
        busy_spent_ = 0;
        cut_armed_now_ = cut_at_ != 0 && stats_.ops == cut_at_;
        if (cut_armed_now_) cut_clock_ = busy_left_ * cut_permille_ / 1000;
    }

    // The octets of the running program: octet i goes to its page at
    // (start + i) mod 256 (the datasheet's wrap); later ones over earlier.
    uint32_t prog_addr(size_t i) const {
        uint32_t page = op_addr_ & ~(PAGE - 1);
        return page | ((op_addr_ + uint32_t(i)) & (PAGE - 1));
    }

    void finish() {
        if (op_erase_) {
            std::memset(mem_ + op_addr_, 0xff, SECTOR);
        } else {
            for (size_t i = 0; i < prog_.size(); i++) mem_[prog_addr(i)] &= prog_[i];
        }
        wel_ = false;
    }

    void do_cut() {
        std::mt19937 rng(cut_seed_ ^ uint32_t(stats_.ops * 2654435761u));
        std::uniform_int_distribution<uint32_t> pm(0, 999);
        if (op_erase_) {
            for (uint32_t i = 0; i < SECTOR; i++) {
                uint32_t r = pm(rng);
                uint8_t& m = mem_[op_addr_ + i];
                if (r < cut_permille_) m = 0xff;
                else if (r < cut_permille_ + 20) m = uint8_t(m | rng());  // partly erased
            }
        } else {
            for (size_t i = 0; i < prog_.size(); i++) {
                uint8_t& m = mem_[prog_addr(i)];
                uint8_t clear = uint8_t(m & ~prog_[i]);
                for (int b = 0; b < 8; b++)
                    if (clear >> b & 1 && pm(rng) < cut_permille_) m = uint8_t(m & ~(1 << b));
            }
        }
        cut_ = Cut{true, stats_.ops, op_erase_, op_addr_, cut_permille_};
        busy_left_ = 0;
        out_oe_ = 0;
        sync();
    }

    // SCK rises: the part samples the controller's lines.
    void rise(uint8_t o) {
        switch (phase_) {
        case CMD:
            opcode_ = uint8_t(opcode_ << 1 | (o & 1));
            if (++bits_ == 8) decode();
            break;
        case ADDR:
            addr_ = (addr_ << 1 | (o & 1)) & 0xffffff;
            if (++bits_ == 24) {
                bits_ = 0;
                if (dummy_) phase_ = DUMMY;
                else if (opcode_ == 0x03) begin_out();
                else phase_ = DIN;
            }
            break;
        case DUMMY:
            if (++bits_ == dummy_) begin_out();
            break;
        case DIN:
            cur_ = quad_ ? uint8_t(cur_ << 4 | (o & 0xf)) : uint8_t(cur_ << 1 | (o & 1));
            nbits_ += quad_ ? 4 : 1;
            if (nbits_ == 8) {
                data_.push_back(cur_);
                if (data_.size() > PAGE) data_.erase(data_.begin());  // the last 256 octets count
                nbits_ = 0;
            }
            break;
        default:
            break;
        }
    }

    void decode() {
        bits_ = 0;
        if (busy_left_ > 0 && opcode_ != 0x05) {
            phase_ = IGNORE;
            return;
        }
        switch (opcode_) {
        case 0x06:
        case 0x04:
            phase_ = DIN;  // nothing more is expected; CS# rise acts
            break;
        case 0x05:
            out_.clear();
            begin_out();
            break;
        case 0x9f:
            out_ = {0xef, 0x40, 0x18};
            begin_out();
            break;
        case 0x03:
        case 0x02:
        case 0x20:
            phase_ = ADDR;
            break;
        case 0x0b:
            phase_ = ADDR;
            dummy_ = 8;
            break;
        case 0x6b:
            phase_ = ADDR;
            dummy_ = 8;
            quad_out_ = true;
            break;
        case 0x32:
            phase_ = ADDR;
            quad_ = true;
            break;
        default:
            phase_ = IGNORE;
        }
        if (opcode_ != 0x6b) quad_out_ = false;
    }

    // The data phase of a read: the first bit goes out at the next falling edge.
    void begin_out() {
        phase_ = DOUT;
        out_pos_ = 0;
        out_bit_ = 0;
    }

    uint8_t out_octet() {
        switch (opcode_) {
        case 0x05:
            return sr();
        case 0x9f:
            return out_pos_ < out_.size() ? out_[out_pos_] : 0xff;
        default:
            return mem_[(addr_ + out_pos_) % SIZE];
        }
    }

    // SCK falls: the part drives the next bit (or nibble) of a read.
    void fall() {
        if (phase_ != DOUT) return;
        uint8_t v = out_octet();
        if (quad_out_) {
            out_oe_ = 0xf;
            out_o_ = out_bit_ == 0 ? v >> 4 : v & 0xf;
            out_bit_ += 4;
        } else {
            out_oe_ = 0x2;
            out_o_ = uint8_t((v >> (7 - out_bit_) & 1) << 1);
            out_bit_ += 1;
        }
        if (out_bit_ == 8) {
            out_bit_ = 0;
            out_pos_++;
        }
    }

    uint8_t* mem_ = nullptr;
    int fd_ = -1;
    uint64_t tpp_ = TPP_DEFAULT, tse_ = TSE_DEFAULT;
    Stats stats_;
    Cut cut_;
    uint64_t cut_at_ = 0, cut_clock_ = 0;
    uint32_t cut_permille_ = 0, cut_seed_ = 0;
    bool cut_armed_now_ = false;
    std::string err_;

    bool cs_n_prev_ = true, sck_prev_ = false;
    Phase phase_ = IGNORE;
    uint32_t bits_ = 0, dummy_ = 0, nbits_ = 0;
    uint8_t opcode_ = 0, cur_ = 0;
    uint32_t addr_ = 0;
    bool quad_ = false, quad_out_ = false;
    std::vector<uint8_t> data_, prog_, out_;
    size_t out_pos_ = 0;
    uint32_t out_bit_ = 0;
    uint8_t out_o_ = 0, out_oe_ = 0;
    bool wel_ = false;
    uint64_t busy_left_ = 0, busy_spent_ = 0;
    bool op_erase_ = false;
    uint32_t op_addr_ = 0;
};
