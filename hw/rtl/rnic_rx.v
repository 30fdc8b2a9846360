// rnic_rx: the iWARP receive datapath, TCP segment payloads in, RDMAP
// placement into host memory out, DATA_W bits per clock, for 2^CONN_W
// connections, each framed by MPA (RFC 5044) or by TUF
// (draft-ietf-tsvwg-tcp-ulp-frame-01 with this stack's CRC32c trailer,
// docs/tuf.md).
//
//                   +-> mpa_rx --- pieces, verdicts ---+
//   s_axis -> steer |     +-> mpa_rx_ooo -- early --+  |
//   (mode_mem)      +-> tuf_rx --- pieces, verdicts -+-> piece merge -> rx_join -+
//                         |  +--- early ------------+                           |
//                         |             early merge -+-> merge -> ddp_rx <-------+
//                         +-- exceptions --+ (and mpa_rx_ooo's) -> exc merge -> m_exc
//   cfg_* -> mpa_rx, tuf_rx (the mode's block enabled), mpa_rx_ooo, rx_join clear, mode_mem
//   fail_* -> mpa_rx and tuf_rx
//   s_conn, s_stag, s_post -> ddp_rx          ddp_rx -> m_axi or m_wr, m_cpl, m_err, status
//
// mpa_rx (RFC 5044 in-order Full Operation) finds the ULPDUs in the
// segments and cuts them into pieces at segment boundaries, with a verdict
// per FPDU; rx_join holds a first piece that is shorter than
// min(H, ULPDU_Length) (H: the header ddp_rx reads, 14, 18 or 46 octets)
// and joins it to the connection's next piece, so
// that every first piece reaching ddp_rx carries the whole DDP/RDMAP
// header (RFC 5041 4, RFC 5040 4), as ddp_rx requires; ddp_rx checks the
// headers and places cut through (hw/README.md, "MPA receive path and the
// interface to placement").
//
// TUF connections. cfg_tuf puts a connection in TUF mode with the peer's
// key (cfg_key, the 48-bit key signalled when TUF was enabled, draft 4.3);
// cfg_* then enables it in tuf_rx, and in mpa_rx with cfg_en = 0 (and the
// other way round in MPA mode), so a connection is enabled in at most one
// block and a stale mode never takes its segments. mode_mem (one bit a
// connection, LUT RAM read with a segment's first beat, held to its
// tlast) steers each segment to the block of its connection's mode; both
// take the same s_axis format. tuf_rx applies the containment test (draft
// 4.4): a segment that starts at the connection's rcv_nxt and is exactly
// one FPDU with the key goes on as one ULPDU piece (header and trailer
// removed, always the whole ULPDU, so rx_join passes it as it is) with a
// verdict (0, or 2 for a bad trailer: the same as mpa_rx's CRC error);
// every other segment goes to m_exc whole, reason 6 (not contained) for
// one that covers rcv_nxt without being such an FPDU. The host delineates
// those in software (iwarp/tuf Receiver) and gives the FPDUs back on
// s_axis one a segment with their own sequence numbers; they then pass.
// An out-of-order TUF segment that is one whole FPDU with the key and a
// good trailer is also placed early through tuf_rx's m_early.
//
// The merges (rx_merge: whole frames, the two inputs in turn when both
// wait, a multiplexer without storage):
//   pieces       mpa_rx's and tuf_rx's into rx_join. The verdicts must
//                reach rx_join in the order of their last pieces there
//                (hw/README.md, "verdict stream"): vq_* records the block
//                of each last piece as it goes in (2^VQ_AW = 32 deep, the
//                count rx_join itself keeps), and the verdict merge takes
//                the next verdict from the block at its head. Each block
//                makes a verdict after its piece's tlast has gone, and the
//                merge passes a beat in the clock it is taken, so the
//                entry is always there first and a verdict still follows
//                its piece's tlast. A last piece waits while vq is full.
//   exceptions   mpa_rx_ooo's (mpa_rx's, searched) and tuf_rx's into
//                m_exc, whole segments.
//   early        mpa_rx_ooo's and tuf_rx's early ULPDUs, whole, then
//                into ddp_rx beside rx_join's pieces (the frame merge
//                below).
//   m_skip       no ready: each block's pulse goes into a hold of its
//                own, and m_skip shows the holds in turn, one a clock, so
//                two pulses in one clock are both reported (one a clock
//                later). A hold is free again within two clocks: tuf_rx
//                pulses at most every other clock (a segment takes it two
//                at least); of two mpa_rx_ooo pulses in consecutive
//                clocks the second is lost if tuf_rx's hold is full too.
//
// Out of order (MPA): a segment that mpa_rx does not take because it lies
// past a hole in the connection's stream (exception reason 3) goes on to
// the host on m_exc, and mpa_rx_ooo searches it on the way for whole FPDUs
// through their markers (RFC 5044 6; connections with markers only). The
// ULPDUs it finds are merged into ddp_rx's input between pieces as early
// ULPDUs (ddp_rx: checked against the connection's state when they come,
// placed if every check passes, never reported). When the hole closes the
// host gives the segment back on s_axis and it is delineated, placed
// again (the same octets) and delivered in order, as without the search.
// The merge takes whole frames, the in-order and the early input in turn
// when both wait.
//
// Ports:
//   cfg_*        the per-connection configuration: cfg_conn, cfg_en,
//                cfg_mrk_en, cfg_crc_en, cfg_base (the first FPDU's
//                sequence number, or the marker's in front of it: see
//                mpa_rx.v), cfg_tuf (1: TUF mode, tuf_rx) and cfg_key (the
//                peer's TUF key; ignored in MPA mode). A write also clears
//                the connection's held octets in rx_join. cfg_ready is
//                high while no write is pending: a write is held in a
//                register until mpa_rx, tuf_rx and rx_join have each taken
//                it (at least one clock; segments after it wait for it).
//                Configure a connection while none of its segments or
//                pieces is inside.
//   fail_*       marks a connection in error (the QP failed), in both
//                blocks (fail_ready: both ready and no cfg_* write
//                pending, so it lands after an earlier cfg_*); its later segments go
//                to m_exc with reason 2 (in error) until cfg_* configures
//                it again.
//   s_axis       TCP segment payloads, as mpa_rx's and tuf_rx's: lane-0
//                aligned, tuser = {conn, seq[31:0], len[15:0]}.
//   m_exc_*      the segments not taken in order, mpa_rx's exception
//                stream (through mpa_rx_ooo) and tuf_rx's, whole segments,
//                tuser {conn, seq, len, reason}: 1 not enabled, 2 in
//                error, 3 out of order, 4 duplicate, 5 empty, 6 not
//                contained (TUF).
//   m_skip_*     an out-of-order segment passed on without a search or an
//                early copy (reason 1 busy, 2 too long), either block's.
//   m_early_*    a pulse for each early ULPDU taken into ddp_rx: conn.
//   ooo_busy     mpa_rx_ooo is searching a segment or has early ULPDUs
//                still to hand on, or tuf_rx's early buffer holds a
//                candidate (copied, checked or read out).
//   s_conn_*, s_stag_*, s_post_*   ddp_rx's configuration streams.
//   m_axi_*      ddp_rx's AXI4 write master (host memory), AXI_W bits
//                (DATA_W, or 2 DATA_W for a port that keeps up with short
//                payloads at arbitrary host offsets: ddp_rx.v); idle with
//                WR_REQ = 1.
//   m_wr_*       ddp_rx's write-request stream (WR_REQ = 1, AXI_W =
//                2 DATA_W): two DATA_W lines a request from a line address,
//                byte strobes, posted; idle with WR_REQ = 0.
//   m_cpl_*, m_err_*               ddp_rx's completions and errors (m_err_hdrct,
//                                  seglen, hdr: what the Terminate copies).
//   m_drop_*, m_post_err_*, m_berr_*, m_done_*   ddp_rx's status pulses.
//   m_stat_*     pulses for the device's counters (rnic_dev), no ready:
//                m_stat_verdict_* one per verdict ddp_rx takes (code,
//                conn: mpa_rx's and tuf_rx's verdicts, in-order FPDUs
//                only); m_stat_place one per in-order (not early) ULPDU
//                whose first piece enters ddp_rx with a payload
//                (ULPDU_Length past the DDP header: 14 octets tagged, 18
//                untagged), the Go model's placement DMA write. Both
//                count TUF connections' ULPDUs as MPA ones'.
//
// Latency and throughput: those of the three blocks in a row (mpa_rx's
// or tuf_rx's cut-through pieces, 2 clocks of rx_join for a piece that
// needs no join, ddp_rx's header checks); the merges and the steering add
// no clock. Measured by tests/rnic_rx/test_rnic_rx.py (MPA) and
// tests/tuf_rx (tuf_rx alone).
//
// Verification: tests/rnic_rx/test_rnic_rx.py, end to end: RDMAP messages
// through the Go stack (cmd/rnic-oracle: rdmap_segments, mpa_fpdus,
// mpa_receive, ddp_place) against the whole host memory, completions and
// errors; tests/rnic_rx/test_rnic_rx_tuf.py, TUF and MPA connections in
// one run (tuf_frames, tuf_receive, tuf_seam): the paths aligned, cut by a
// middlebox, cut and joined, reordered and duplicated, the host's
// give-back, early placement, a bad trailer, no false positive.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_rx #(
    parameter DATA_W = 64,
    parameter CONN_W = 10,
    parameter STAG_AW = 12,
    parameter RQ_AW = 3,
    parameter ADDR_W = 64,
    parameter ID_W = 32,
    parameter BURST = 8,
    parameter REC_AW = 3,
    parameter SEG_OCTETS = 16384,     // mpa_rx_ooo's segment buffer
    parameter AXI_W = DATA_W,         // the host write port: DATA_W or 2 DATA_W (ddp_rx)
    parameter WR_REQ = 0              // 1: host writes on the request stream m_wr_* (ddp_rx)
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire                    cfg_valid,
    output wire                    cfg_ready,
    input  wire [CONN_W-1:0]       cfg_conn,
    input  wire                    cfg_en,
    input  wire                    cfg_mrk_en,
    input  wire                    cfg_crc_en,
    input  wire [31:0]             cfg_base,
    input  wire                    cfg_tuf,
    input  wire [47:0]             cfg_key,

    input  wire                    fail_valid,
    output wire                    fail_ready,
    input  wire [CONN_W-1:0]       fail_conn,

    input  wire [DATA_W-1:0]       s_axis_tdata,
    input  wire [DATA_W/8-1:0]     s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,
    input  wire [CONN_W+47:0]      s_axis_tuser,

    output wire [DATA_W-1:0]       m_exc_tdata,
    output wire [DATA_W/8-1:0]     m_exc_tkeep,
    output wire                    m_exc_tvalid,
    input  wire                    m_exc_tready,
    output wire                    m_exc_tlast,
    output wire [CONN_W+50:0]      m_exc_tuser,

    output wire                    m_skip_valid,
    output wire [CONN_W-1:0]       m_skip_conn,
    output wire [31:0]             m_skip_seq,
    output wire [1:0]              m_skip_reason,
    output wire                    m_early_valid,
    output wire [CONN_W-1:0]       m_early_conn,
    output wire                    ooo_busy,

    input  wire                    s_conn_valid,
    output wire                    s_conn_ready,
    input  wire [CONN_W-1:0]       s_conn_conn,
    input  wire                    s_conn_enable,
    input  wire [31:0]             s_conn_pd,

    input  wire                    s_stag_valid,
    output wire                    s_stag_ready,
    input  wire [STAG_AW-1:0]      s_stag_index,
    input  wire                    s_stag_entry_valid,
    input  wire [7:0]              s_stag_key,
    input  wire [31:0]             s_stag_pd,
    input  wire                    s_stag_bound,
    input  wire [CONN_W-1:0]       s_stag_conn,
    input  wire [1:0]              s_stag_access,
    input  wire [63:0]             s_stag_base,
    input  wire [31:0]             s_stag_len,
    input  wire [ADDR_W-1:0]       s_stag_addr,

    input  wire                    s_post_valid,
    output wire                    s_post_ready,
    input  wire [CONN_W-1:0]       s_post_conn,
    input  wire [1:0]              s_post_qn,
    input  wire [ADDR_W-1:0]       s_post_addr,
    input  wire [31:0]             s_post_len,
    input  wire [ID_W-1:0]         s_post_id,

    output wire [0:0]              m_axi_awid,
    output wire [ADDR_W-1:0]       m_axi_awaddr,
    output wire [7:0]              m_axi_awlen,
    output wire [2:0]              m_axi_awsize,
    output wire [1:0]              m_axi_awburst,
    output wire [3:0]              m_axi_awcache,
    output wire [2:0]              m_axi_awprot,
    output wire                    m_axi_awvalid,
    input  wire                    m_axi_awready,
    output wire [AXI_W-1:0]        m_axi_wdata,
    output wire [AXI_W/8-1:0]      m_axi_wstrb,
    output wire                    m_axi_wlast,
    output wire                    m_axi_wvalid,
    input  wire                    m_axi_wready,
    input  wire [0:0]              m_axi_bid,
    input  wire [1:0]              m_axi_bresp,
    input  wire                    m_axi_bvalid,
    output wire                    m_axi_bready,
    output wire [ADDR_W-1:0]       m_wr_addr,
    output wire [AXI_W-1:0]        m_wr_data,
    output wire [AXI_W/8-1:0]      m_wr_strb,
    output wire                    m_wr_last,
    output wire                    m_wr_valid,
    input  wire                    m_wr_ready,

    output wire                    m_cpl_valid,
    input  wire                    m_cpl_ready,
    output wire [CONN_W-1:0]       m_cpl_conn,
    output wire [3:0]              m_cpl_opcode,
    output wire                    m_cpl_tagged,
    output wire [1:0]              m_cpl_qn,
    output wire [31:0]             m_cpl_msn,
    output wire [31:0]             m_cpl_len,
    output wire [ID_W-1:0]         m_cpl_id,
    output wire [31:0]             m_cpl_stag,
    output wire [31:0]             m_cpl_inv_stag,
    output wire [223:0]            m_cpl_rr,

    output wire                    m_err_valid,
    input  wire                    m_err_ready,
    output wire [CONN_W-1:0]       m_err_conn,
    output wire [3:0]              m_err_layer,
    output wire [3:0]              m_err_etype,
    output wire [7:0]              m_err_code,
    output wire [1:0]              m_err_hdrct,
    output wire [15:0]             m_err_seglen,
    output wire [143:0]            m_err_hdr,

    output wire                    m_drop_valid,
    output wire [CONN_W-1:0]       m_drop_conn,
    output wire [1:0]              m_drop_reason,
    output wire                    m_drop_first,
    output wire [31:0]             m_drop_count,
    output wire                    m_post_err_valid,
    output wire [CONN_W-1:0]       m_post_err_conn,
    output wire [1:0]              m_post_err_qn,
    output wire [ID_W-1:0]         m_post_err_id,
    output wire [1:0]              m_post_err_reason,
    output wire                    m_berr_valid,
    output wire [CONN_W-1:0]       m_berr_conn,
    output wire [1:0]              m_berr_resp,
    output wire                    m_done_valid,
    output wire [CONN_W-1:0]       m_done_conn,

    output wire                    m_stat_verdict_valid,
    output wire [2:0]              m_stat_verdict_code,
    output wire [CONN_W-1:0]       m_stat_verdict_conn,
    output wire                    m_stat_place
);

localparam N = DATA_W / 8;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_rx: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
end

// ---- configuration: one write to mpa_rx, tuf_rx, mpa_rx_ooo and rx_join's clear -----
//
// A write is taken into cfg_*_reg (cfg_ready = no write pending) and
// offered to mpa_rx, tuf_rx and rx_join's clear from there, each taking it
// when it is ready (its *_done_reg set), until all three have. The clear
// goes first (the blocks take the write with it or after it, so the
// pieces of the segments after the write find the connection cleared in
// rx_join); beyond that no block's ready gates another's valid, so none of
// their ready logic reaches into another block. mpa_rx_ooo (always ready) and mode_mem take it in the
// clock of the handshake. A segment that comes after the handshake waits in
// the block of its connection's mode until that block has taken the write
// (mpa_rx and tuf_rx classify no segment while cfg_valid is high). The
// connection is enabled in the block of its mode only: the other gets
// cfg_en = 0, so a stale mode never takes its segments.

wire mpa_cfg_ready, tuf_cfg_ready, clr_ready, ooo_cfg_ready;
reg                c_pend_reg = 1'b0;     // a write is pending
reg                c_mpa_done_reg = 1'b0, c_tuf_done_reg = 1'b0, c_clr_done_reg = 1'b0;
reg [CONN_W-1:0]   c_conn_reg = 0;
reg                c_en_reg = 1'b0, c_mrk_en_reg = 1'b0, c_crc_en_reg = 1'b0, c_tuf_reg = 1'b0;
reg [31:0]         c_base_reg = 0;
reg [47:0]         c_key_reg = 0;
assign cfg_ready = !c_pend_reg;
wire cfg_go = cfg_valid && !c_pend_reg;
wire c_clr_valid = c_pend_reg && !c_clr_done_reg;
wire c_clr_now = c_clr_done_reg || clr_ready;          // (clr_ready: a register of rx_join's)
wire c_mpa_valid = c_pend_reg && !c_mpa_done_reg && c_clr_now;
wire c_tuf_valid = c_pend_reg && !c_tuf_done_reg && c_clr_now;
wire c_mpa_now = c_mpa_done_reg || (c_clr_now && mpa_cfg_ready);
wire c_tuf_now = c_tuf_done_reg || (c_clr_now && tuf_cfg_ready);

reg mode_mem [0:(1<<CONN_W)-1];          // per connection: 1 TUF (tuf_rx), 0 MPA (mpa_rx)
integer mode_i;
initial begin
    for (mode_i = 0; mode_i < (1 << CONN_W); mode_i = mode_i + 1) begin
        mode_mem[mode_i] = 1'b0;
    end
end

always @(posedge clk) begin
    if (cfg_go) begin
        mode_mem[cfg_conn] <= cfg_tuf;
    end
end

always @(posedge clk) begin
    if (cfg_go) begin
        c_pend_reg <= 1'b1;
        c_mpa_done_reg <= 1'b0;
        c_tuf_done_reg <= 1'b0;
        c_clr_done_reg <= 1'b0;
        c_conn_reg <= cfg_conn;
        c_en_reg <= cfg_en;
        c_mrk_en_reg <= cfg_mrk_en;
        c_crc_en_reg <= cfg_crc_en;
        c_tuf_reg <= cfg_tuf;
        c_base_reg <= cfg_base;
        c_key_reg <= cfg_key;
    end else if (c_pend_reg) begin
        c_mpa_done_reg <= c_mpa_now;
        c_tuf_done_reg <= c_tuf_now;
        c_clr_done_reg <= c_clr_now;
        if (c_mpa_now && c_tuf_now && c_clr_now) begin
            c_pend_reg <= 1'b0;
        end
    end
    if (rst) begin
        c_pend_reg <= 1'b0;
    end
end

// fail_*: to both blocks in one handshake (the connection is enabled in
// one; in the other the mark is harmless: a write through cfg_* clears it),
// never while a cfg_* write is pending, so that a fail_* after a cfg_*
// (rnic_dev's queue) lands after it, as if the write had been taken in its
// handshake's clock.
wire mpa_fail_ready, tuf_fail_ready;
assign fail_ready = mpa_fail_ready && tuf_fail_ready && !c_pend_reg;

// ---- steering: each segment to the block of its connection's mode ------------
//
// The mode is read (LUT RAM, asynchronous) with the segment's first beat
// at s_axis and held to its tlast.

reg  s_inf_reg = 1'b0;                   // inside a segment
reg  s_sel_reg = 1'b0;                   // its block (1: tuf_rx)
wire s_sel = s_inf_reg ? s_sel_reg : mode_mem[s_axis_tuser[CONN_W+47:48]];
wire mpa_s_tready, tuf_s_tready;
assign s_axis_tready = s_sel ? tuf_s_tready : mpa_s_tready;

always @(posedge clk) begin
    if (s_axis_tvalid && s_axis_tready) begin
        s_inf_reg <= !s_axis_tlast;
        s_sel_reg <= s_sel;
    end
    if (rst) begin
        s_inf_reg <= 1'b0;
        s_sel_reg <= 1'b0;
    end
end

// ---- mpa_rx, tuf_rx -> merge -> rx_join -> ddp_rx -------------------------------

wire [DATA_W-1:0]  p_tdata;              // mpa_rx's pieces and verdicts
wire [N-1:0]       p_tkeep;
wire               p_tvalid, p_tready, p_tlast;
wire [CONN_W+17:0] p_tuser;
wire [2:0]         pv_tdata;
wire               pv_tvalid, pv_tready;
wire [CONN_W-1:0]  pv_tuser;
wire [DATA_W-1:0]  t_tdata;              // tuf_rx's
wire [N-1:0]       t_tkeep;
wire               t_tvalid, t_tready, t_tlast;
wire [CONN_W+17:0] t_tuser;
wire [2:0]         tv_tdata;
wire               tv_tvalid, tv_tready;
wire [CONN_W-1:0]  tv_tuser;
wire [DATA_W-1:0]  q_tdata;              // both, into rx_join
wire [N-1:0]       q_tkeep;
wire               q_tvalid, q_tready, q_tlast;
wire [CONN_W+17:0] q_tuser;
wire [2:0]         qv_tdata;
wire               qv_tvalid, qv_tready;
wire [CONN_W-1:0]  qv_tuser;

wire [DATA_W-1:0]  j_tdata;
wire [N-1:0]       j_tkeep;
wire               j_tvalid, j_tready, j_tlast;
wire [CONN_W+17:0] j_tuser;
wire [2:0]         jv_tdata;
wire [DATA_W-1:0]  x_tdata;              // mpa_rx's exception stream, to mpa_rx_ooo
wire [N-1:0]       x_tkeep;
wire               x_tvalid, x_tready, x_tlast;
wire [CONN_W+50:0] x_tuser;
wire [DATA_W-1:0]  ox_tdata;             // mpa_rx_ooo's
wire [N-1:0]       ox_tkeep;
wire               ox_tvalid, ox_tready, ox_tlast;
wire [CONN_W+50:0] ox_tuser;
wire [DATA_W-1:0]  tx_tdata;             // tuf_rx's
wire [N-1:0]       tx_tkeep;
wire               tx_tvalid, tx_tready, tx_tlast;
wire [CONN_W+50:0] tx_tuser;
wire [DATA_W-1:0]  oe_tdata;             // mpa_rx_ooo's early ULPDUs
wire [N-1:0]       oe_tkeep;
wire               oe_tvalid, oe_tready, oe_tlast;
wire [CONN_W+47:0] oe_tuser;
wire [DATA_W-1:0]  te_tdata;             // tuf_rx's
wire [N-1:0]       te_tkeep;
wire               te_tvalid, te_tready, te_tlast;
wire [CONN_W+47:0] te_tuser;
wire [DATA_W-1:0]  e_tdata;              // both
wire [N-1:0]       e_tkeep;
wire               e_tvalid, e_tready, e_tlast;
wire [CONN_W+47:0] e_tuser;
wire [DATA_W-1:0]  k_tdata;
wire [N-1:0]       k_tkeep;
wire               k_tvalid, k_tready, k_tlast;
wire [CONN_W+18:0] k_tuser;
wire               jv_tvalid, jv_tready;
wire [CONN_W-1:0]  jv_tuser;

mpa_rx #(.DATA_W(DATA_W), .CONN_W(CONN_W)) mpa (
    .clk(clk), .rst(rst),
    .cfg_valid(c_mpa_valid), .cfg_ready(mpa_cfg_ready), .cfg_conn(c_conn_reg),
    .cfg_en(c_en_reg && !c_tuf_reg), .cfg_mrk_en(c_mrk_en_reg), .cfg_crc_en(c_crc_en_reg), .cfg_base(c_base_reg),
    .fail_valid(fail_valid && tuf_fail_ready && !c_pend_reg), .fail_ready(mpa_fail_ready), .fail_conn(fail_conn),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid && !s_sel),
    .s_axis_tready(mpa_s_tready), .s_axis_tlast(s_axis_tlast), .s_axis_tuser(s_axis_tuser),
    .m_axis_tdata(p_tdata), .m_axis_tkeep(p_tkeep), .m_axis_tvalid(p_tvalid),
    .m_axis_tready(p_tready), .m_axis_tlast(p_tlast), .m_axis_tuser(p_tuser),
    .m_verdict_tdata(pv_tdata), .m_verdict_tvalid(pv_tvalid), .m_verdict_tready(pv_tready),
    .m_verdict_tuser(pv_tuser),
    .m_exc_tdata(x_tdata), .m_exc_tkeep(x_tkeep), .m_exc_tvalid(x_tvalid),
    .m_exc_tready(x_tready), .m_exc_tlast(x_tlast), .m_exc_tuser(x_tuser)
);

wire               tuf_busy;
wire               o_skip_valid, t_skip_valid;
wire [CONN_W-1:0]  o_skip_conn, t_skip_conn;
wire [31:0]        o_skip_seq, t_skip_seq;
wire [1:0]         o_skip_reason, t_skip_reason;
wire               ooo_search_busy;

tuf_rx #(.DATA_W(DATA_W), .CONN_W(CONN_W), .SEG_OCTETS(SEG_OCTETS)) tuf (
    .clk(clk), .rst(rst),
    .cfg_valid(c_tuf_valid), .cfg_ready(tuf_cfg_ready), .cfg_conn(c_conn_reg),
    .cfg_en(c_en_reg && c_tuf_reg), .cfg_key(c_key_reg), .cfg_base(c_base_reg),
    .fail_valid(fail_valid && mpa_fail_ready && !c_pend_reg), .fail_ready(tuf_fail_ready), .fail_conn(fail_conn),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid && s_sel),
    .s_axis_tready(tuf_s_tready), .s_axis_tlast(s_axis_tlast), .s_axis_tuser(s_axis_tuser),
    .m_axis_tdata(t_tdata), .m_axis_tkeep(t_tkeep), .m_axis_tvalid(t_tvalid),
    .m_axis_tready(t_tready), .m_axis_tlast(t_tlast), .m_axis_tuser(t_tuser),
    .m_verdict_tdata(tv_tdata), .m_verdict_tvalid(tv_tvalid), .m_verdict_tready(tv_tready),
    .m_verdict_tuser(tv_tuser),
    .m_exc_tdata(tx_tdata), .m_exc_tkeep(tx_tkeep), .m_exc_tvalid(tx_tvalid),
    .m_exc_tready(tx_tready), .m_exc_tlast(tx_tlast), .m_exc_tuser(tx_tuser),
    .m_early_tdata(te_tdata), .m_early_tkeep(te_tkeep), .m_early_tvalid(te_tvalid),
    .m_early_tready(te_tready), .m_early_tlast(te_tlast), .m_early_tuser(te_tuser),
    .m_skip_valid(t_skip_valid), .m_skip_conn(t_skip_conn), .m_skip_seq(t_skip_seq),
    .m_skip_reason(t_skip_reason),
    .early_busy(tuf_busy)
);

mpa_rx_ooo #(.DATA_W(DATA_W), .CONN_W(CONN_W), .SEG_OCTETS(SEG_OCTETS)) ooo (
    .clk(clk), .rst(rst),
    .cfg_valid(cfg_go), .cfg_ready(ooo_cfg_ready), .cfg_conn(cfg_conn),
    .cfg_mrk_en(cfg_mrk_en), .cfg_crc_en(cfg_crc_en), .cfg_base(cfg_base),
    .s_exc_tdata(x_tdata), .s_exc_tkeep(x_tkeep), .s_exc_tvalid(x_tvalid), .s_exc_tready(x_tready),
    .s_exc_tlast(x_tlast), .s_exc_tuser(x_tuser),
    .m_exc_tdata(ox_tdata), .m_exc_tkeep(ox_tkeep), .m_exc_tvalid(ox_tvalid),
    .m_exc_tready(ox_tready), .m_exc_tlast(ox_tlast), .m_exc_tuser(ox_tuser),
    .m_early_tdata(oe_tdata), .m_early_tkeep(oe_tkeep), .m_early_tvalid(oe_tvalid), .m_early_tready(oe_tready),
    .m_early_tlast(oe_tlast), .m_early_tuser(oe_tuser),
    .m_skip_valid(o_skip_valid), .m_skip_conn(o_skip_conn), .m_skip_seq(o_skip_seq),
    .m_skip_reason(o_skip_reason),
    .busy(ooo_search_busy)
);

assign ooo_busy = ooo_search_busy || tuf_busy;

// The exception streams (whole segments) and the early ULPDUs (whole
// ULPDUs) of the two blocks, each into one stream.
rx_merge #(.DATA_W(DATA_W), .USER_W(CONN_W + 51)) exc_merge (
    .clk(clk), .rst(rst),
    .s0_tdata(ox_tdata), .s0_tkeep(ox_tkeep), .s0_tvalid(ox_tvalid), .s0_tready(ox_tready),
    .s0_tlast(ox_tlast), .s0_tuser(ox_tuser),
    .s1_tdata(tx_tdata), .s1_tkeep(tx_tkeep), .s1_tvalid(tx_tvalid), .s1_tready(tx_tready),
    .s1_tlast(tx_tlast), .s1_tuser(tx_tuser),
    .m_tdata(m_exc_tdata), .m_tkeep(m_exc_tkeep), .m_tvalid(m_exc_tvalid), .m_tready(m_exc_tready),
    .m_tlast(m_exc_tlast), .m_tuser(m_exc_tuser)
);

rx_merge #(.DATA_W(DATA_W), .USER_W(CONN_W + 48)) early_merge (
    .clk(clk), .rst(rst),
    .s0_tdata(oe_tdata), .s0_tkeep(oe_tkeep), .s0_tvalid(oe_tvalid), .s0_tready(oe_tready),
    .s0_tlast(oe_tlast), .s0_tuser(oe_tuser),
    .s1_tdata(te_tdata), .s1_tkeep(te_tkeep), .s1_tvalid(te_tvalid), .s1_tready(te_tready),
    .s1_tlast(te_tlast), .s1_tuser(te_tuser),
    .m_tdata(e_tdata), .m_tkeep(e_tkeep), .m_tvalid(e_tvalid), .m_tready(e_tready),
    .m_tlast(e_tlast), .m_tuser(e_tuser)
);

// The pieces, whole, into rx_join; the verdicts in the order of their
// last pieces there (rx_join's and ddp_rx's rule: hw/README.md, "verdict
// stream"). vq_* records, for each last piece (tuser last on its tlast
// beat) that has gone into rx_join, the block it came from (1: tuf_rx);
// the verdict merge takes the next verdict from the block at its head.
// Each block makes its verdict after its piece's tlast has gone, and the
// merge passes a beat in the clock it is taken, so the entry is there
// first. A last piece waits while vq is full (2^VQ_AW verdicts
// outstanding: rx_join's own count of them is 5 bits).
localparam VQ_AW = 5;
reg               vq_mem [0:(1<<VQ_AW)-1];
reg [VQ_AW:0]     vq_wp_reg = 0, vq_rp_reg = 0;
wire              vq_empty = vq_wp_reg == vq_rp_reg;
wire              vq_full = vq_wp_reg == {~vq_rp_reg[VQ_AW], vq_rp_reg[VQ_AW-1:0]};
wire              vq_head = vq_mem[vq_rp_reg[VQ_AW-1:0]];
wire              q_join_ready;
wire              q_ends = q_tlast && q_tuser[0];
assign q_tready = q_join_ready && !(q_ends && vq_full);

rx_merge #(.DATA_W(DATA_W), .USER_W(CONN_W + 18)) piece_merge (
    .clk(clk), .rst(rst),
    .s0_tdata(p_tdata), .s0_tkeep(p_tkeep), .s0_tvalid(p_tvalid), .s0_tready(p_tready),
    .s0_tlast(p_tlast), .s0_tuser(p_tuser),
    .s1_tdata(t_tdata), .s1_tkeep(t_tkeep), .s1_tvalid(t_tvalid), .s1_tready(t_tready),
    .s1_tlast(t_tlast), .s1_tuser(t_tuser),
    .m_tdata(q_tdata), .m_tkeep(q_tkeep), .m_tvalid(q_tvalid), .m_tready(q_tready),
    .m_tlast(q_tlast), .m_tuser(q_tuser)
);

always @(posedge clk) begin
    if (q_tvalid && q_tready && q_ends) begin
        vq_mem[vq_wp_reg[VQ_AW-1:0]] <= t_tready;    // (t_tready: the beat is tuf_rx's)
        vq_wp_reg <= vq_wp_reg + 1'b1;
    end
    if (qv_tvalid && qv_tready) begin
        vq_rp_reg <= vq_rp_reg + 1'b1;
    end
    if (rst) begin
        vq_wp_reg <= 0;
        vq_rp_reg <= 0;
    end
end

assign qv_tvalid = !vq_empty && (vq_head ? tv_tvalid : pv_tvalid);
assign qv_tdata = vq_head ? tv_tdata : pv_tdata;
assign qv_tuser = vq_head ? tv_tuser : pv_tuser;
assign pv_tready = !vq_empty && !vq_head && qv_tready;
assign tv_tready = !vq_empty && vq_head && qv_tready;

// m_skip: both blocks' pulses (no ready), each through a one-entry hold
// (o_sk_*, t_sk_*) that the output takes from in turn when both hold one,
// so that two pulses in one clock are both reported (one a clock later).
// A hold is emptied within two clocks, so a pulse is never lost when its
// block's next pulse comes two clocks or more later. tuf_rx's always do
// (a segment takes it two clocks at least); mpa_rx_ooo's may come in two
// clocks in a row (two one-beat out-of-order segments back to back), and
// the second of those is lost only if tuf_rx's hold is full then too.
reg               o_sk_reg = 1'b0, t_sk_reg = 1'b0, sk_turn_reg = 1'b0;
reg [CONN_W+33:0] o_sk_data_reg, t_sk_data_reg;
wire              sk_pick = t_sk_reg && (!o_sk_reg || sk_turn_reg);   // 1: tuf_rx's hold
assign m_skip_valid = o_sk_reg || t_sk_reg;
assign {m_skip_conn, m_skip_seq, m_skip_reason} = sk_pick ? t_sk_data_reg : o_sk_data_reg;

always @(posedge clk) begin
    if (m_skip_valid) begin
        sk_turn_reg <= !sk_pick;
        if (sk_pick) begin
            t_sk_reg <= 1'b0;
        end else begin
            o_sk_reg <= 1'b0;
        end
    end
    if (o_skip_valid) begin
        o_sk_reg <= 1'b1;
        o_sk_data_reg <= {o_skip_conn, o_skip_seq, o_skip_reason};
    end
    if (t_skip_valid) begin
        t_sk_reg <= 1'b1;
        t_sk_data_reg <= {t_skip_conn, t_skip_seq, t_skip_reason};
    end
    if (rst) begin
        o_sk_reg <= 1'b0;
        t_sk_reg <= 1'b0;
        sk_turn_reg <= 1'b0;
    end
end

rx_join #(.DATA_W(DATA_W), .CONN_W(CONN_W)) joiner (
    .clk(clk), .rst(rst),
    .s_axis_tdata(q_tdata), .s_axis_tkeep(q_tkeep), .s_axis_tvalid(q_tvalid),
    .s_axis_tready(q_join_ready), .s_axis_tlast(q_tlast), .s_axis_tuser(q_tuser),
    .m_axis_tdata(j_tdata), .m_axis_tkeep(j_tkeep), .m_axis_tvalid(j_tvalid),
    .m_axis_tready(j_tready), .m_axis_tlast(j_tlast), .m_axis_tuser(j_tuser),
    .s_verdict_tdata(qv_tdata), .s_verdict_tvalid(qv_tvalid), .s_verdict_tready(qv_tready),
    .s_verdict_tuser(qv_tuser),
    .m_verdict_tdata(jv_tdata), .m_verdict_tvalid(jv_tvalid), .m_verdict_tready(jv_tready),
    .m_verdict_tuser(jv_tuser),
    .clr_valid(c_clr_valid), .clr_ready(clr_ready), .clr_conn(c_conn_reg)
);

// ---- merge: rx_join's pieces and the early ULPDUs, frame by frame -------------
//
// rx_merge: a frame starts from whichever input waits, from the one not
// taken last when both do, and holds the choice to its tlast. An early
// ULPDU goes to ddp_rx as one piece: tuser {early, ulpdu_len, conn, first,
// last}.

rx_merge #(.DATA_W(DATA_W), .USER_W(CONN_W + 19)) ddp_merge (
    .clk(clk), .rst(rst),
    .s0_tdata(j_tdata), .s0_tkeep(j_tkeep), .s0_tvalid(j_tvalid), .s0_tready(j_tready),
    .s0_tlast(j_tlast), .s0_tuser({1'b0, j_tuser}),
    .s1_tdata(e_tdata), .s1_tkeep(e_tkeep), .s1_tvalid(e_tvalid), .s1_tready(e_tready),
    .s1_tlast(e_tlast), .s1_tuser({1'b1, e_tuser[CONN_W +: 16], e_tuser[CONN_W-1:0], 2'b11}),
    .m_tdata(k_tdata), .m_tkeep(k_tkeep), .m_tvalid(k_tvalid), .m_tready(k_tready),
    .m_tlast(k_tlast), .m_tuser(k_tuser)
);

reg                m_inf_reg = 1'b0;        // inside a frame into ddp_rx
reg                early_valid_reg = 1'b0;
reg [CONN_W-1:0]   early_conn_reg = 0;

always @(posedge clk) begin
    early_valid_reg <= 1'b0;
    if (k_tvalid && k_tready) begin
        m_inf_reg <= !k_tlast;
        if (!m_inf_reg) begin
            early_valid_reg <= k_tuser[CONN_W+18];
            early_conn_reg <= k_tuser[CONN_W+1:2];
        end
    end
    if (rst) begin
        m_inf_reg <= 1'b0;
        early_valid_reg <= 1'b0;
    end
end

assign m_early_valid = early_valid_reg;
assign m_early_conn = early_conn_reg;

// The counters' pulses (m_stat_*): a verdict as ddp_rx takes it; a
// ULPDU's first piece (not early) with a payload, by its DDP header's T
// bit (octet 0 bit 7, RFC 5041 4) and its ULPDU_Length.
assign m_stat_verdict_valid = jv_tvalid && jv_tready;
assign m_stat_verdict_code = jv_tdata;
assign m_stat_verdict_conn = jv_tuser;
assign m_stat_place = k_tvalid && k_tready && !m_inf_reg && !k_tuser[CONN_W+18] && k_tuser[1] &&
                      k_tuser[CONN_W+2 +: 16] > (k_tdata[7] ? 16'd14 : 16'd18);

// Not needed: the early ULPDU's stream position, the always-ready
// configuration port of mpa_rx_ooo.
wire unused_ok = &{1'b0, e_tuser[CONN_W+16 +: 32], ooo_cfg_ready};

ddp_rx #(
    .DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .RQ_AW(RQ_AW), .ADDR_W(ADDR_W),
    .ID_W(ID_W), .BURST(BURST), .REC_AW(REC_AW), .AXI_W(AXI_W),
    .WR_REQ(WR_REQ)
) ddp (
    .clk(clk), .rst(rst),
    .s_axis_tdata(k_tdata), .s_axis_tkeep(k_tkeep), .s_axis_tvalid(k_tvalid),
    .s_axis_tready(k_tready), .s_axis_tlast(k_tlast), .s_axis_tuser(k_tuser),
    .s_verdict_tdata(jv_tdata), .s_verdict_tuser(jv_tuser), .s_verdict_tvalid(jv_tvalid),
    .s_verdict_tready(jv_tready),
    .s_conn_valid(s_conn_valid), .s_conn_ready(s_conn_ready), .s_conn_conn(s_conn_conn),
    .s_conn_enable(s_conn_enable), .s_conn_pd(s_conn_pd),
    .s_stag_valid(s_stag_valid), .s_stag_ready(s_stag_ready), .s_stag_index(s_stag_index),
    .s_stag_entry_valid(s_stag_entry_valid), .s_stag_key(s_stag_key), .s_stag_pd(s_stag_pd),
    .s_stag_bound(s_stag_bound), .s_stag_conn(s_stag_conn), .s_stag_access(s_stag_access),
    .s_stag_base(s_stag_base), .s_stag_len(s_stag_len), .s_stag_addr(s_stag_addr),
    .s_post_valid(s_post_valid), .s_post_ready(s_post_ready), .s_post_conn(s_post_conn),
    .s_post_qn(s_post_qn), .s_post_addr(s_post_addr), .s_post_len(s_post_len), .s_post_id(s_post_id),
    .m_axi_awid(m_axi_awid), .m_axi_awaddr(m_axi_awaddr), .m_axi_awlen(m_axi_awlen),
    .m_axi_awsize(m_axi_awsize), .m_axi_awburst(m_axi_awburst), .m_axi_awcache(m_axi_awcache),
    .m_axi_awprot(m_axi_awprot), .m_axi_awvalid(m_axi_awvalid), .m_axi_awready(m_axi_awready),
    .m_axi_wdata(m_axi_wdata), .m_axi_wstrb(m_axi_wstrb), .m_axi_wlast(m_axi_wlast),
    .m_axi_wvalid(m_axi_wvalid), .m_axi_wready(m_axi_wready),
    .m_axi_bid(m_axi_bid), .m_axi_bresp(m_axi_bresp), .m_axi_bvalid(m_axi_bvalid),
    .m_axi_bready(m_axi_bready),
    .m_wr_addr(m_wr_addr), .m_wr_data(m_wr_data), .m_wr_strb(m_wr_strb), .m_wr_last(m_wr_last),
    .m_wr_valid(m_wr_valid), .m_wr_ready(m_wr_ready),
    .m_cpl_valid(m_cpl_valid), .m_cpl_ready(m_cpl_ready), .m_cpl_conn(m_cpl_conn),
    .m_cpl_opcode(m_cpl_opcode), .m_cpl_tagged(m_cpl_tagged), .m_cpl_qn(m_cpl_qn),
    .m_cpl_msn(m_cpl_msn), .m_cpl_len(m_cpl_len), .m_cpl_id(m_cpl_id), .m_cpl_stag(m_cpl_stag),
    .m_cpl_inv_stag(m_cpl_inv_stag), .m_cpl_rr(m_cpl_rr),
    .m_err_valid(m_err_valid), .m_err_ready(m_err_ready), .m_err_conn(m_err_conn),
    .m_err_layer(m_err_layer), .m_err_etype(m_err_etype), .m_err_code(m_err_code),
    .m_err_hdrct(m_err_hdrct), .m_err_seglen(m_err_seglen), .m_err_hdr(m_err_hdr),
    .m_drop_valid(m_drop_valid), .m_drop_conn(m_drop_conn), .m_drop_reason(m_drop_reason),
    .m_drop_first(m_drop_first), .m_drop_count(m_drop_count),
    .m_post_err_valid(m_post_err_valid), .m_post_err_conn(m_post_err_conn),
    .m_post_err_qn(m_post_err_qn), .m_post_err_id(m_post_err_id),
    .m_post_err_reason(m_post_err_reason),
    .m_berr_valid(m_berr_valid), .m_berr_conn(m_berr_conn), .m_berr_resp(m_berr_resp),
    .m_done_valid(m_done_valid), .m_done_conn(m_done_conn)
);

endmodule

`resetall
