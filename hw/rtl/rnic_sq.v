// rnic_sq: the device's SQ engine (docs/device.md, "Send queue entry",
// "Completion queue entry", "Event ring"; issue 30, item 2). It takes the
// SQ doorbells, fetches each QP's 64-octet SQ entries through a DMA read
// client port, decodes and checks them, translates the local buffer through
// the MR table, hands rnic_tx one descriptor per message and streams its
// payload from a second DMA read client port, and writes the completion
// records and events the Go model writes for the same entries
// (driver/model/datapath.go: runSQ, execSQE, mrCheck, retire, fail,
// sqFault; doorbell.go: qpDoorbell). Octet for octet the same wire, CQEs
// and events is what tests/sq checks, against cmd/rnic-oracle's sq_run.
//
//   sqdb -> D1 (QP context read) -> D2 (checks) -> pi[q] / DOORBELL_BAD,
//                                                  RING_OVERRUN events
//   pick a QP with work (round robin) -> its context (admin qp_rd port)
//     -> fail pending:   QP_ERROR event, Terminate (RDMAP Local
//                        Catastrophic, RFC 5040 7) through rnic_tx, the
//                        outstanding Reads flushed, the error state
//     -> retire pending: the pending entries' completions, in SQ order
//     -> else fetch the entry at ci (wqe_rd), decode and check (execSQE's
//        order), MR check (mr_rd port), payload read (pay_rd), descriptor
//        (tx_desc), payload (tx_axis), then retire.
//
// Per QP (flip-flops): producer index pi (from the doorbell), consumer index
// ci, the QP_RTS parameters it needs (ORD, MULPDU), the transmit MSNs of
// queues 0 (Send), 1 (Read Request) and 2 (Terminate), each 1 at QP_RTS
// (RFC 5041 4.3), the Reads outstanding and answered, the error state, and
// the pending list: entries fetched and not yet completed, in SQ order, in a
// RAM of 2^PEND_LOG2 records a QP (sdp_ram: {read, signalled, status,
// opcode, length, ID}). A Write or Send is done once on the wire (RFC 5040
// 5.1); a Read when its Read Response is in (rr_done). Completions leave
// the head of the list while its entries are done, so a Write or Send after
// a Read completes after it (the model's pendWR list). A QP whose list is
// full stops fetching until its head retires (the model's list is as long as
// the ring; the order of everything is the same, only later).
//
// Checks, in the model's order: a WQE fetch with rd_err fails the QP (the
// DMA engine reports DMA_REFUSED; the entry stays at ci); in the error state
// every entry fetched completes FLUSHED (ID and opcode from the entry); an
// unknown opcode, flags bits 7:2, octets 2..3, 20..23, 48..63 non-zero, or
// a Read with ORD 0 completes BAD_WQE; a Read beyond the ORD, or a fenced
// entry while a Read is outstanding, waits (the entry is fetched again at
// the next rr_done); the local buffer (length > 0: valid, key, PD, local
// write for a Read's sink or local read for a source, bounds) else
// LOCAL_ACCESS; the payload read (rd_err on its first beat: LOCAL_ACCESS);
// then a Write, Send or Send with SE whose Invalidate STag is not zero
// completes BAD_WQE (after the payload read, as the model). A failed entry
// sends nothing, and the QP goes to the error state (fail: QP_ERROR with
// detail 0 and value 0, a Terminate on queue 2).
//
// Doorbells (docs/device.md, RNDB): a qpn beyond the QPs, a QP that is free
// (rnic_admin's state) or bits 31:16 set raises DOORBELL_BAD (detail 0,
// index qpn, value the word); a producer index more than the ring's size
// past ci raises RING_OVERRUN (value the index) and, on a QP in RTS, fails
// it; the index is then not taken. One doorbell a clock, no ready.
//
// Interface (brief-dev-ifaces.md; valid/ready, little-endian records):
//   sqdb_*            SQ doorbells (rnic_dev), one-clock pulses
//   qp_state_wr_*, qp_rts_*   rnic_admin's pulses: created resets the
//                     indices, QP_RTS starts the engine on the QP (ORD,
//                     MULPDU, MSNs 1), free or drained stops it
//   qp_rd_*, mr_rd_*  rnic_admin's read ports (one clock); the doorbell
//                     stage has priority on qp_rd; rts_rd_* unused (the
//                     parameters are kept from the qp_rts pulse)
//   rr_done_*         a Read's completion from the receive side: qpn,
//                     status (0 SUCCESS: the QP's oldest outstanding Read
//                     is done, its CQE carries the Read's length; else
//                     the CQE status, e.g. PROTOCOL or REMOTE, given to the
//                     oldest outstanding Read with layer/etype and code in
//                     octets 21/22, every other entry FLUSHED, the QP in
//                     error: the receive side sends any Terminate and
//                     raises the event, this engine neither). Taken while
//                     the engine is between entries.
//   xfail_*           one-clock pulse, no ready: a QP failure found
//                     elsewhere (the model's fail() and its fault kinds):
//                     kind 0 a local fault (rnic_rq's refused RQ entry
//                     fetch, rnic_rresp's refused source read): as this
//                     engine's own (QP_ERROR detail 0 value 0, a Terminate
//                     of RDMAP Local Catastrophic); kind 1 an error in the
//                     peer's stream (ddp_rx's m_err, rnic_rresp's
//                     protection errors): QP_ERROR with detail
//                     layer_etype and value code, a Terminate naming them
//                     (with the copies hdrct, seglen, ddp_hdr, rdma_hdr
//                     give: RFC 5040 4.8), the target's status
//                     (PROTOCOL, CONN) to target 1 (the oldest unanswered
//                     Read) or 2 (the oldest posted receive, through
//                     qerr), 0 none; kind 2 the peer's Terminate:
//                     TERMINATE_RECEIVED (detail layer_etype, value code),
//                     nothing sent, the status (REMOTE) with the
//                     Terminate's octets to the oldest unanswered Read, or
//                     if none to the oldest posted receive (hasUndone).
//                     The first fault of a QP wins; later ones are
//                     ignored (the model's fail returns once in error).
//                     xfail_hdrct {M, D, R}, xfail_seglen, xfail_ddp_hdr
//                     (octet j in [8j+7:8j], 14 octets by its T bit or
//                     18), xfail_rdma_hdr (the 28-octet Read Request):
//                     what the fault's Terminate copies, kind 0 included
//                     (the Read responder's refused source read: D and
//                     R); this engine's own faults copy nothing
//   qerr_*            one-clock pulse: the QP has entered the error state
//                     (a fault processed, or an rr_done error), for the
//                     engines that flush on it (rnic_rq): status, layer/
//                     etype and code for the oldest posted receive
//                     (FLUSHED unless the fault's target is the receive)
//   wqe_rd_*, pay_rd_*  DMA read client ports (what 1 SQ WQE fetch, 3
//                     payload read)
//   tx_desc_*, tx_axis_*  rnic_tx's s_desc and s_axis
//   cq_*              completion records (cqn: the QP's send CQ; octets
//                     0..30 of the CQE)
//   ev_*              events (octets 0..14), through a 4-entry FIFO;
//                     dropped_ev pulses when a doorbell's event found it full
//                     (doorbells cannot wait)
//
// QP_DRAIN (the drained state pulse) completes the pending entries (FLUSHED
// if not done) and stops the QP's fetching, as the model's drainQP; the
// fence itself (rnic_admin answering only once they are in the CQ) is the
// lead's wiring. Not done (the model does it): a ring overrun on a
// QP not yet in RTS (the model's QP goes to error silently and refuses
// QP_RTS; here rnic_admin's state decides); a payload read with an AXI error
// after its first beat (the message is already on its way: it completes
// LOCAL_ACCESS and fails the QP after its last beat, the wire carries what
// was read); a MULPDU too small for a header (rnic_tx's ddp_err; the model
// completes BAD_WQE).
//
// Throughput (rnic_tx's FPDU beats per clock, tests/sq throughput cases, no
// back-pressure, DMA latency 2..12 clocks): back-to-back 64 KiB Writes on
// two QPs 0.996 at W=64 (0.993, 0.989, 0.974 at 128, 256, 512); 256-octet
// Writes 0.595 at W=64 (0.474 without the prefetch and the early MR read),
// 0.220 at W=512: about 23 clocks of per-entry work (QP pick and context,
// decode, MR check, the payload read's latency, the retire) between
// payloads.
//
// Verification: tests/sq/test_rnic_sq.py (rnic_admin + rnic_sq + rnic_tx,
// tests/sq/sq_top.v), every wire octet, CQE and event against the Go model
// through cmd/rnic-oracle's sq_run.
//
// Parameters: as rnic_dev's (the unused ones accepted for uniform
// instantiation), and PEND_LOG2, the pending list's length a QP.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/* verilator lint_off UNUSEDPARAM */
module rnic_sq #(
    parameter DATA_W    = 64,
    parameter CONN_W    = 6,
    parameter STAG_AW   = 10,
    parameter CQ_W      = 6,
    parameter VEC_W     = 2,
    parameter WIN_W     = 4,
    parameter SQ_LOG2   = 10,
    parameter RQ_LOG2   = 10,
    parameter CQ_LOG2   = 12,
    parameter PEND_LOG2 = 4
) (
/* verilator lint_on UNUSEDPARAM */
    input  wire                  clk,
    input  wire                  rst,

    input  wire                  sqdb_valid,
    input  wire [11:0]           sqdb_qpn,
    input  wire [31:0]           sqdb_value,

    input  wire                  qp_state_wr_valid,
    input  wire [CONN_W-1:0]     qp_state_wr_qpn,
    input  wire [1:0]            qp_state_wr_state,
    input  wire                  qp_rts_valid,
    input  wire [CONN_W-1:0]     qp_rts_qpn,
    input  wire [227:0]          qp_rts_params,
    output wire                  qp_rd_en,
    output wire [CONN_W-1:0]     qp_rd_qpn,
    input  wire [1:0]            qp_rd_state,
    input  wire [16+64+64+5+5+2*CQ_W-1:0] qp_rd_ctx,
    output wire                  rts_rd_en,
    output wire [CONN_W-1:0]     rts_rd_qpn,
    input  wire [227:0]          rts_rd_params,
    output wire                  mr_rd_en,
    output wire [STAG_AW-1:0]    mr_rd_index,
    input  wire                  mr_rd_valid,
    input  wire [235:0]          mr_rd_entry,

    input  wire                  rr_done_valid,
    output wire                  rr_done_ready,
    input  wire [CONN_W-1:0]     rr_done_qpn,
    input  wire [7:0]            rr_done_status,
    input  wire [7:0]            rr_done_layer_etype,
    input  wire [7:0]            rr_done_code,

    input  wire                  xfail_valid,
    input  wire [CONN_W-1:0]     xfail_qpn,
    input  wire [1:0]            xfail_kind,
    input  wire [7:0]            xfail_status,
    input  wire [1:0]            xfail_target,
    input  wire [7:0]            xfail_layer_etype,
    input  wire [7:0]            xfail_code,
    input  wire [2:0]            xfail_hdrct,
    input  wire [15:0]           xfail_seglen,
    input  wire [143:0]          xfail_ddp_hdr,
    input  wire [223:0]          xfail_rdma_hdr,
    output wire                  qerr_valid,
    output wire [CONN_W-1:0]     qerr_qpn,
    output wire [7:0]            qerr_status,
    output wire [7:0]            qerr_layer_etype,
    output wire [7:0]            qerr_code,

    output wire                  wqe_rd_req_valid,
    input  wire                  wqe_rd_req_ready,
    output wire [63:0]           wqe_rd_req_addr,
    output wire [31:0]           wqe_rd_req_len,
    output wire [2:0]            wqe_rd_req_what,
    input  wire                  wqe_rd_valid,
    output wire                  wqe_rd_ready,
    input  wire [DATA_W-1:0]     wqe_rd_data,
    input  wire [DATA_W/8-1:0]   wqe_rd_keep,
    input  wire                  wqe_rd_last,
    input  wire                  wqe_rd_err,

    output wire                  pay_rd_req_valid,
    input  wire                  pay_rd_req_ready,
    output wire [63:0]           pay_rd_req_addr,
    output wire [31:0]           pay_rd_req_len,
    output wire [2:0]            pay_rd_req_what,
    input  wire                  pay_rd_valid,
    output wire                  pay_rd_ready,
    input  wire [DATA_W-1:0]     pay_rd_data,
    input  wire [DATA_W/8-1:0]   pay_rd_keep,
    input  wire                  pay_rd_last,
    input  wire                  pay_rd_err,

    output wire                  tx_desc_valid,
    input  wire                  tx_desc_ready,
    output wire [3:0]            tx_desc_opcode,
    output wire [31:0]           tx_desc_stag,
    output wire [63:0]           tx_desc_to,
    output wire [31:0]           tx_desc_msn,
    output wire [31:0]           tx_desc_inv_stag,
    output wire [31:0]           tx_desc_len,
    output wire [31:0]           tx_desc_rr_sink_stag,
    output wire [63:0]           tx_desc_rr_sink_to,
    output wire [31:0]           tx_desc_rr_size,
    output wire [31:0]           tx_desc_rr_src_stag,
    output wire [63:0]           tx_desc_rr_src_to,
    output wire [15:0]           tx_desc_mulpdu,
    output wire [CONN_W-1:0]     tx_desc_conn,

    output wire [DATA_W-1:0]     tx_axis_tdata,
    output wire [DATA_W/8-1:0]   tx_axis_tkeep,
    output wire                  tx_axis_tvalid,
    input  wire                  tx_axis_tready,
    output wire                  tx_axis_tlast,

    output wire                  cq_valid,
    input  wire                  cq_ready,
    output wire [CQ_W-1:0]       cq_cqn,
    output wire [247:0]          cq_entry,

    output wire                  ev_valid,
    input  wire                  ev_ready,
    output wire [119:0]          ev_entry,
    output wire                  dropped_ev,

    // QP_DRAIN's output word (rnic_admin): the consumer index of QP ci_rd_qpn
    // (combinational, read-only).
    input  wire [CONN_W-1:0]     ci_rd_qpn,
    output wire [15:0]           ci_rd_value
);

localparam L      = DATA_W / 8;
localparam QPS    = 1 << CONN_W;
localparam [PEND_LOG2:0] PEND_N = 1 << PEND_LOG2;
localparam REC_W  = 1 + 1 + 3 + 3 + 32 + 64;
localparam QP_CTX_W = 16 + 64 + 64 + 5 + 5 + 2 * CQ_W;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_sq: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (CONN_W < 1 || CONN_W > 12 || STAG_AW < 1 || STAG_AW > 16 || PEND_LOG2 < 1 || PEND_LOG2 > 8) begin
        $error("rnic_sq: CONN_W 1..12, STAG_AW 1..16, PEND_LOG2 1..8; got %0d, %0d, %0d", CONN_W, STAG_AW, PEND_LOG2);
        $finish;
    end
end

// Statuses (docs/device.md), event types, SQ opcodes.
localparam [2:0] ST_SUCCESS = 3'd0, ST_FLUSHED = 3'd1, ST_BAD_WQE = 3'd2, ST_LOCAL_ACCESS = 3'd3;
localparam [7:0] EV_QP_ERROR = 8'd1, EV_TERM_RECEIVED = 8'd2, EV_DOORBELL_BAD = 8'd4, EV_RING_OVERRUN = 8'd5;
localparam [1:0] QP_FREE = 2'd0, QP_CREATED = 2'd1, QP_DRAINED = 2'd3;
localparam [2:0] OP_WRITE = 3'd0, OP_READ = 3'd1, OP_SEND = 3'd2, OP_SENDSE = 3'd4;

// ---------------------------------------------------------------------------
// Per-QP state.
reg [15:0] pi_r   [0:QPS-1];
reg [15:0] ci_r   [0:QPS-1];
reg [7:0]  ord_r  [0:QPS-1];
reg [15:0] mpdu_r [0:QPS-1];
reg [31:0] msn0_r [0:QPS-1];
reg [31:0] msn1_r [0:QPS-1];
reg [31:0] msn2_r [0:QPS-1];
reg [7:0]  reads_r [0:QPS-1];    // Read Requests sent, not answered
reg [7:0]  ans_r  [0:QPS-1];     // Reads answered, not yet retired
reg [PEND_LOG2-1:0] phead_r [0:QPS-1];
reg [PEND_LOG2:0]   pcnt_r  [0:QPS-1];
reg [QPS-1:0] run_r;     // QP_RTS seen (until created again, free or drained)
reg [QPS-1:0] err_r;     // the error state
reg [QPS-1:0] blk_r;     // waiting: ORD, fence, or a refused fetch in error
reg [QPS-1:0] failp_r;   // a local fault to process
reg [QPS-1:0] retp_r;    // completions to retire
reg [QPS-1:0] rerr_r;    // an rr_done error: the oldest Read takes its status
reg [7:0]  rerr_st_r [0:QPS-1];
reg [15:0] rerr_tm_r [0:QPS-1];
// The fault to process (failp_r), as xfail gave it: kind (0 local, 1 an
// error in the peer's stream, 2 the peer's Terminate), the target's status,
// the target (0 none, 1 the oldest unanswered Read, 2 the oldest posted
// receive), layer/etype and code.
localparam [1:0] FK_LOCAL = 2'd0, FK_REMOTE = 2'd2;   // (1: an error in the peer's stream)
reg [1:0]  fk_r  [0:QPS-1];
reg [7:0]  fst_r [0:QPS-1];
reg [1:0]  ftg_r [0:QPS-1];
reg [7:0]  fle_r [0:QPS-1];
reg [7:0]  fcd_r [0:QPS-1];
reg [2:0]  fhc_r [0:QPS-1];      // the Terminate's hdrct {M, D, R} (the copies in u_term)

// ---------------------------------------------------------------------------
// The event FIFO (4 entries).
reg [119:0] evq [0:3];
reg [1:0]   evq_wp, evq_rp;
reg [2:0]   evq_n;
wire        evq_full = evq_n == 3'd4;
assign ev_valid = evq_n != 3'd0;
assign ev_entry = evq[evq_rp];

function automatic [119:0] event_f(input [7:0] typ, input [15:0] index, input [31:0] value);
    event_f = {56'd0, value, index, 8'd0, typ};
endfunction
function automatic [119:0] event_d(input [7:0] typ, input [7:0] detail, input [15:0] index, input [31:0] value);
    event_d = {56'd0, value, index, detail, typ};
endfunction

// ---------------------------------------------------------------------------
// Doorbell stage: D1 reads the QP context, D2 checks.
reg        d1_v, d2_v;
reg [11:0] d1_q, d2_q;
reg [31:0] d1_val, d2_val;
reg        d2_inrange;

wire        d1_inrange = d1_q < QPS;
wire [CONN_W-1:0] d2_qpn = d2_q[CONN_W-1:0];
wire [4:0]  d2_log2 = qp_rd_ctx[2*CQ_W+9:2*CQ_W+5];
wire [15:0] d2_diff = d2_val[15:0] - ci_r[d2_qpn];
wire        d2_bad = !d2_inrange || qp_rd_state == QP_FREE || d2_val[31:16] != 16'd0;
wire        d2_over = !d2_bad && ({1'b0, d2_diff} > (17'd1 << d2_log2));
wire        d2_ev = d2_v && (d2_bad || d2_over);
wire [119:0] d2_event = d2_bad ? event_f(EV_DOORBELL_BAD, {4'd0, d2_q}, d2_val)
                               : event_f(EV_RING_OVERRUN, {4'd0, d2_q}, {16'd0, d2_val[15:0]});

// ---------------------------------------------------------------------------
// The engine.
localparam [4:0] S_IDLE = 5'd0, S_CTX = 5'd1, S_CTX2 = 5'd2, S_FAIL_EV = 5'd3, S_FAIL_TD = 5'd4,
                 S_FAIL_TP = 5'd5, S_RET = 5'd6, S_RET2 = 5'd7, S_RET_CQ = 5'd8, S_FETCH = 5'd9,
                 S_WQE = 5'd10, S_DEC = 5'd11, S_FLUSH_CQ = 5'd12, S_MR2 = 5'd14,
                 S_PAYREQ = 5'd15, S_PAYFIRST = 5'd16, S_DRAIN = 5'd17, S_ISSUE = 5'd18,
                 S_STREAM = 5'd19, S_PUSH = 5'd20, S_PFWAIT = 5'd21, S_PFDROP = 5'd22, S_FAIL_RM = 5'd23;

reg [4:0]        st;
reg [CONN_W-1:0] cur;
reg [CONN_W-1:0] rr_ptr;
reg [511:0]      wqe;
reg [2:0]        wqe_beat;
reg              wqe_err;
reg [15:0]       c_pd;
reg [63:0]       c_ring;
reg [4:0]        c_log2;
reg [CQ_W-1:0]   c_cq;
reg [63:0]       pay_addr;
reg              pay_err;
reg [2:0]        push_st;     // the record pushed at S_PUSH
reg              push_fail;   // then fail the QP
reg [247:0]      cqe_r;
// The fault being processed (S_FAIL_*): as fk_r .. fcd_r.
reg [1:0]        c_fk;
reg [7:0]        c_fst;
reg [1:0]        c_ftg;
reg [7:0]        c_fle;
reg [7:0]        c_fcd;
reg [2:0]        c_fhc;
reg [2:0]        t_beat;      // the Terminate's payload beat (S_FAIL_TP)
wire             t_last;      // its last beat
wire [5:0]       t_len;       // its length in octets

// The prefetch: while an entry's payload streams, the QP's next entry (at
// ci, already advanced) is fetched into pf_buf, so that the SQ fetch of the
// next entry overlaps the payload of the current one. The engine uses it
// when it next takes that QP at that index, else drops it. Prefetch only
// fetches an entry the model fetches too (it fetches the next entry after
// every outcome of the current one, and before deciding to wait).
localparam [1:0] PF_EMPTY = 2'd0, PF_REQ = 2'd1, PF_RECV = 2'd2, PF_FULL = 2'd3;
reg [1:0]        pf_st;
reg [CONN_W-1:0] pf_q;
reg [15:0]       pf_idx;
reg [63:0]       pf_addr;
reg [511:0]      pf_buf;
reg [2:0]        pf_beat;
reg              pf_err;
reg              pf_stale;
wire [15:0]      ci_cur = ci_r[cur];
wire [63:0]      ring_addr = c_ring + ({48'd0, ci_cur & ((16'd1 << c_log2) - 16'd1)} << 6);
wire             pf_go = pf_st == PF_EMPTY && (st == S_ISSUE || st == S_STREAM) && !err_r[cur] &&
                         !failp_r[cur] && ci_cur != pi_r[cur] &&
                         pcnt_r[cur] + 1'b1 < PEND_N;
wire             pf_hit = pf_q == cur && pf_idx == ci_cur && !pf_stale;

// The fetched entry's fields (docs/device.md, "Send queue entry").
wire [7:0]  e_op8   = wqe[7:0];
wire [2:0]  e_op    = wqe[2:0];
wire [2:0]  e_rawop = (e_op8 <= 8'd5) ? e_op : OP_WRITE;
wire        e_sig   = wqe[8];
wire        e_fence = wqe[9];
wire [31:0] e_len   = wqe[63:32];
wire [63:0] e_id    = wqe[127:64];
wire [31:0] e_lkey  = wqe[159:128];
wire [63:0] e_lto   = wqe[255:192];
wire [31:0] e_rkey  = wqe[287:256];
wire [31:0] e_inv   = wqe[319:288];
wire [63:0] e_rto   = wqe[383:320];
wire        e_read  = e_op8 == 8'd1;
wire        e_badfmt = e_op8 > 8'd5 || wqe[15:10] != 6'd0 || wqe[31:16] != 16'd0 ||
                       wqe[191:160] != 32'd0 || wqe[511:384] != 128'd0;
wire        e_bad   = e_badfmt || (e_read && ord_r[cur] == 8'd0);
// A Write, Send or Send with SE must have no Invalidate STag.
wire        e_invbad = e_inv != 32'd0 && (e_op == OP_WRITE || e_op == OP_SEND || e_op == OP_SENDSE);
wire        e_wait  = !e_bad && ((e_read && reads_r[cur] >= ord_r[cur]) || (e_fence && reads_r[cur] != 8'd0));

// The MR check (mrCheck): {key, access, pd, bound, base_to, len, addr}.
wire [7:0]  m_key  = mr_rd_entry[235:228];
wire [3:0]  m_acc  = mr_rd_entry[227:224];
wire [15:0] m_pd   = mr_rd_entry[223:208];
wire [63:0] m_base = mr_rd_entry[191:128];
wire [63:0] m_mlen = mr_rd_entry[127:64];
wire [63:0] m_addr = mr_rd_entry[63:0];
wire [64:0] m_end  = {1'b0, e_lto} + {33'd0, e_len};
wire [64:0] m_lim  = {1'b0, m_base} + {1'b0, m_mlen};
wire        m_need = e_read ? m_acc[1] : m_acc[0];
wire        m_idx_ok = (e_lkey[31:8] >> STAG_AW) == 24'd0;
wire        m_ok   = m_idx_ok && mr_rd_valid && m_key == e_lkey[7:0] && m_pd == c_pd && m_need &&
                     e_lto >= m_base && !m_end[64] && m_end <= m_lim;

// A fault from xfail is taken: the first of its QP (the model's fail
// returns once in error).
wire        xf_take = xfail_valid && run_r[xfail_qpn] && !err_r[xfail_qpn] && !failp_r[xfail_qpn] &&
                      !(d2_v && d2_over && d2_qpn == xfail_qpn);

// The pending list's RAM.
wire                          pr_we;
wire [CONN_W+PEND_LOG2-1:0]   pr_waddr;
wire [REC_W-1:0]              pr_wdata;
wire                          pr_re;
wire [CONN_W+PEND_LOG2-1:0]   pr_raddr;
wire [REC_W-1:0]              pr_rdata;
sdp_ram #(.WIDTH(REC_W), .ADDR_W(CONN_W + PEND_LOG2)) u_pend (
    .clk(clk), .wr_en(pr_we), .wr_addr(pr_waddr), .wr_data(pr_wdata),
    .rd_en(pr_re), .rd_addr(pr_raddr), .rd_data(pr_rdata));
wire [PEND_LOG2-1:0] p_tail = phead_r[cur] + pcnt_r[cur][PEND_LOG2-1:0];
assign pr_we    = st == S_PUSH;
assign pr_waddr = {cur, p_tail};
// {read, signalled, status, opcode, length, ID}: a fault record has length 0.
assign pr_wdata = {e_read && push_st == ST_SUCCESS, e_sig, push_st, e_rawop,
                   push_st == ST_SUCCESS ? e_len : 32'd0, e_id};
assign pr_re    = st == S_RET;
assign pr_raddr = {cur, phead_r[cur]};
wire        r_read = pr_rdata[REC_W-1];
wire        r_sig  = pr_rdata[REC_W-2];
wire [2:0]  r_st   = pr_rdata[REC_W-3:REC_W-5];
wire [2:0]  r_op   = pr_rdata[REC_W-6:REC_W-8];
wire [31:0] r_len  = pr_rdata[95:64];
wire [63:0] r_id   = pr_rdata[63:0];
wire        r_undone = r_read && ans_r[cur] == 8'd0;   // an unanswered Read
// In the error state, an unanswered Read completes FLUSHED (or with the
// rr_done error's status, the first one).
wire        r_rerr = r_undone && rerr_r[cur];
wire [7:0]  r_status = r_rerr ? rerr_st_r[cur] : r_undone ? {5'd0, ST_FLUSHED} : {5'd0, r_st};
wire [15:0] r_term = r_rerr ? rerr_tm_r[cur] : 16'd0;
wire [31:0] r_clen = r_undone ? 32'd0 : r_len;

function automatic [247:0] cqe_f(input [63:0] id, input [31:0] len, input [15:0] qpn, input [2:0] op,
                                 input [7:0] status, input [15:0] term);
    cqe_f = {64'd0, term, 8'd0, 32'd0, status, 5'd0, op, qpn, len, id};
endfunction

// Work of a QP: something to fail or retire, or an entry to fetch.
reg [QPS-1:0] ready_v;
integer k;
always @* begin
    for (k = 0; k < QPS; k = k + 1) begin
        ready_v[k] = failp_r[k] || retp_r[k] ||
                     (run_r[k] && ci_r[k] != pi_r[k] && !blk_r[k] && pcnt_r[k] != PEND_N);
    end
end
// Round robin: the first QP with work at or after rr_ptr.
reg              pick_v;
reg [CONN_W-1:0] pick_q;
reg [CONN_W:0]   pj;
always @* begin
    pick_v = 1'b0;
    pick_q = {CONN_W{1'b0}};
    for (pj = 0; pj < QPS; pj = pj + 1) begin
        if (!pick_v && ready_v[rr_ptr + pj[CONN_W-1:0]]) begin
            pick_v = 1'b1;
            pick_q = rr_ptr + pj[CONN_W-1:0];
        end
    end
end

assign rr_done_ready = st == S_IDLE;
// The error state begins: a local fault's Terminate is out, or an rr_done
// error is taken.
// (The peer's Terminate sends none: S_FAIL_RM.)
wire   fail_in    = (st == S_FAIL_TP && tx_axis_tready && t_last) || st == S_FAIL_RM;
// fail()'s target: the oldest unanswered Read (1), or the oldest posted
// receive (2); the peer's Terminate goes to the Read when one is
// outstanding (hasUndone), else to the receive.
wire   f_tg_sq    = c_ftg == 2'd1 || (c_fk == FK_REMOTE && reads_r[cur] != 8'd0);
wire   f_tg_rq    = c_ftg == 2'd2 || (c_fk == FK_REMOTE && reads_r[cur] == 8'd0);
assign qerr_valid = fail_in ||
                    (st == S_IDLE && rr_done_valid && reads_r[rr_done_qpn] != 8'd0 && rr_done_status != 8'd0);
assign qerr_qpn   = st == S_IDLE ? rr_done_qpn : cur;
assign qerr_status      = (st != S_IDLE && f_tg_rq) ? c_fst : {5'd0, ST_FLUSHED};
assign qerr_layer_etype = (st != S_IDLE && f_tg_rq) ? c_fle : 8'd0;
assign qerr_code        = (st != S_IDLE && f_tg_rq) ? c_fcd : 8'd0;

// Admin read ports.
assign qp_rd_en  = d1_v ? d1_inrange : st == S_CTX;
assign qp_rd_qpn = d1_v ? d1_q[CONN_W-1:0] : cur;
assign rts_rd_en  = 1'b0;
assign rts_rd_qpn = {CONN_W{1'b0}};
// (Read in S_DEC, where the entry is decoded: used in S_MR2 when the entry
// has a local buffer.)
assign mr_rd_en    = st == S_DEC;
assign mr_rd_index = e_lkey[STAG_AW+7:8];

// DMA requests.
assign wqe_rd_req_valid = st == S_FETCH || pf_st == PF_REQ;
assign wqe_rd_req_addr  = pf_st == PF_REQ ? pf_addr : ring_addr;
assign wqe_rd_req_len   = 32'd64;
assign wqe_rd_req_what  = 3'd1;
assign wqe_rd_ready     = st == S_WQE || pf_st == PF_RECV;
assign pay_rd_req_valid = st == S_PAYREQ;
assign pay_rd_req_addr  = pay_addr;
assign pay_rd_req_len   = e_len;
assign pay_rd_req_what  = 3'd3;
assign pay_rd_ready     = st == S_DRAIN || (st == S_STREAM && tx_axis_tready);

// rnic_tx.
wire term = st == S_FAIL_TD;
assign tx_desc_valid  = (st == S_ISSUE && !e_invbad) || term;
assign tx_desc_opcode = term ? 4'd7 : e_op == OP_WRITE ? 4'd0 : e_op == OP_READ ? 4'd1 : {1'b0, e_op} + 4'd1;
assign tx_desc_stag   = e_rkey;
assign tx_desc_to     = e_rto;
assign tx_desc_msn    = term ? msn2_r[cur] : e_read ? msn1_r[cur] : msn0_r[cur];
assign tx_desc_inv_stag = term ? 32'd0 : e_inv;
assign tx_desc_len    = term ? {26'd0, t_len} : e_read ? 32'd0 : e_len;
assign tx_desc_rr_sink_stag = e_lkey;
assign tx_desc_rr_sink_to   = e_lto;
assign tx_desc_rr_size      = e_len;
assign tx_desc_rr_src_stag  = e_rkey;
assign tx_desc_rr_src_to    = e_rto;
assign tx_desc_mulpdu = mpdu_r[cur];
assign tx_desc_conn   = cur;
// The Terminate's payload (RFC 5040 4.8; iwarp/rdmap's Terminate.Append):
// the Terminate Control (layer and etype in octet 0, the code in octet 1,
// hdrct M, D, R in the top bits of octet 2), then with M the DDP Segment
// Length (2 octets, big-endian), with D the DDP header (14 octets if its
// T bit is set, else 18), with R the Read Request header (28): layer
// RDMAP, etype and code Local Catastrophic (all 0) for a local fault (RFC
// 5040 7), the error found for one in the peer's stream; the copies are
// the fault's (xfail_hdrct .. xfail_rdma_hdr, kept in u_term: read at
// S_CTX2, held until the next S_CTX2). 4 to 52 octets, in beats of L.
wire [383:0] t_word;
sdp_ram #(.WIDTH(384), .ADDR_W(CONN_W)) u_term (
    .clk(clk), .wr_en(xf_take), .wr_addr(xfail_qpn),
    .wr_data({xfail_seglen, xfail_ddp_hdr, xfail_rdma_hdr}),
    .rd_en(st == S_CTX2), .rd_addr(cur), .rd_data(t_word));
wire         t_m = c_fhc[2], t_d = c_fhc[1], t_r = c_fhc[0];
wire [15:0]  t_seg = t_word[383:368];
wire [143:0] t_hdr = t_word[367:224];
wire [223:0] t_rr = t_word[223:0];
wire [4:0]   t_hl = t_d ? (t_hdr[7] ? 5'd14 : 5'd18) : 5'd0;   // T (RFC 5041 4.1)
wire [5:0]   t_off_h = t_m ? 6'd6 : 6'd4;
wire [5:0]   t_off_r = t_off_h + {1'b0, t_hl};
assign       t_len = t_off_r + (t_r ? 6'd28 : 6'd0);
wire [143:0] t_hdrm = t_hl == 5'd14 ? {32'd0, t_hdr[111:0]} : t_hl == 5'd18 ? t_hdr : 144'd0;
wire [511:0] t_pay = {480'd0, 8'd0, t_m, t_d, t_r, 5'd0, c_fcd, c_fle} |
                     (t_m ? {496'd0, t_seg[7:0], t_seg[15:8]} << 32 : 512'd0) |
                     ({368'd0, t_hdrm} << {t_off_h, 3'd0}) |
                     (t_r ? {288'd0, t_rr} << {t_off_r, 3'd0} : 512'd0);
wire [5:0]   t_beats_m1 = (t_len - 6'd1) >> $clog2(L);
assign       t_last = {3'd0, t_beat} == t_beats_m1;
wire [6:0]   t_rem = {1'b0, t_len} - ({4'd0, t_beat} << $clog2(L));   // octets from this beat on
wire [L-1:0] t_keep = t_last ? ~({L{1'b1}} << t_rem) : {L{1'b1}};
assign tx_axis_tvalid = st == S_FAIL_TP || (st == S_STREAM && pay_rd_valid);
assign tx_axis_tdata  = st == S_FAIL_TP ? t_pay[t_beat * DATA_W +: DATA_W] : pay_rd_data;
assign tx_axis_tkeep  = st == S_FAIL_TP ? t_keep : pay_rd_keep;
assign tx_axis_tlast  = st == S_FAIL_TP ? t_last : pay_rd_last;

assign cq_valid = st == S_RET_CQ || st == S_FLUSH_CQ;
assign cq_cqn   = c_cq;
assign cq_entry = cqe_r;

// The engine pushes QP_ERROR when the doorbell stage does not push.
wire eng_ev = st == S_FAIL_EV && !d2_ev && !evq_full;
assign dropped_ev = d2_ev && evq_full;

/* verilator lint_off UNUSEDSIGNAL */
wire unused = &{1'b0, rts_rd_params, wqe_rd_keep, qp_rts_params[227:220], qp_rts_params[195:0],
                mr_rd_entry[207:192], qp_rd_ctx[2*CQ_W+73:2*CQ_W+10], qp_rd_ctx[2*CQ_W+4:2*CQ_W],
                qp_rd_ctx[CQ_W-1:0], wqe_err, m_acc[3:2]};
/* verilator lint_on UNUSEDSIGNAL */

integer q;
always @(posedge clk) begin
    // --- the doorbell stage ---
    d1_v <= sqdb_valid;
    d1_q <= sqdb_qpn;
    d1_val <= sqdb_value;
    d2_v <= d1_v;
    d2_q <= d1_q;
    d2_val <= d1_val;
    d2_inrange <= d1_inrange;
    if (d2_v && !d2_bad && !d2_over) begin
        pi_r[d2_qpn] <= d2_val[15:0];
        blk_r[d2_qpn] <= 1'b0;    // a refused fetch in error is tried again
    end
    if (d2_v && d2_over && run_r[d2_qpn] && !err_r[d2_qpn]) begin
        failp_r[d2_qpn] <= 1'b1;
    end
    if (d2_v && d2_over && run_r[d2_qpn] && !err_r[d2_qpn] && !failp_r[d2_qpn]) begin
        fk_r[d2_qpn] <= FK_LOCAL;
        ftg_r[d2_qpn] <= 2'd0;
        fle_r[d2_qpn] <= 8'd0;
        fcd_r[d2_qpn] <= 8'd0;
        fhc_r[d2_qpn] <= 3'd0;
    end
    // The first fault of a QP is the one it fails with.
    if (xf_take) begin
        failp_r[xfail_qpn] <= 1'b1;
        fk_r[xfail_qpn] <= xfail_kind;
        fst_r[xfail_qpn] <= xfail_status;
        ftg_r[xfail_qpn] <= xfail_kind == FK_LOCAL ? 2'd0 : xfail_target;
        fle_r[xfail_qpn] <= xfail_kind == FK_LOCAL ? 8'd0 : xfail_layer_etype;
        fcd_r[xfail_qpn] <= xfail_kind == FK_LOCAL ? 8'd0 : xfail_code;
        fhc_r[xfail_qpn] <= xfail_hdrct;
    end

    // --- the event FIFO ---
    if (d2_ev && !evq_full) begin
        evq[evq_wp] <= d2_event;
    end else if (eng_ev) begin
        evq[evq_wp] <= event_d(c_fk == FK_REMOTE ? EV_TERM_RECEIVED : EV_QP_ERROR, c_fle,
                               {{(16-CONN_W){1'b0}}, cur}, {24'd0, c_fcd});
    end
    if ((d2_ev && !evq_full) || eng_ev) begin
        evq_wp <= evq_wp + 2'd1;
    end
    if (ev_valid && ev_ready) begin
        evq_rp <= evq_rp + 2'd1;
    end
    evq_n <= evq_n + {2'd0, (d2_ev && !evq_full) || eng_ev} - {2'd0, ev_valid && ev_ready};

    // --- the engine ---
    case (st)
    S_IDLE: begin
        if (rr_done_valid) begin
            // A Read's completion (rx.go: EventReadResponse).
            if (reads_r[rr_done_qpn] != 8'd0) begin
                reads_r[rr_done_qpn] <= reads_r[rr_done_qpn] - 8'd1;
                blk_r[rr_done_qpn] <= 1'b0;
                retp_r[rr_done_qpn] <= 1'b1;
                if (rr_done_status == 8'd0) begin
                    ans_r[rr_done_qpn] <= ans_r[rr_done_qpn] + 8'd1;
                end else begin
                    rerr_r[rr_done_qpn] <= 1'b1;
                    rerr_st_r[rr_done_qpn] <= rr_done_status;
                    rerr_tm_r[rr_done_qpn] <= {rr_done_code, rr_done_layer_etype};
                    err_r[rr_done_qpn] <= 1'b1;
                end
            end
        end else if (pick_v) begin
            cur <= pick_q;
            rr_ptr <= pick_q + 1'b1;
            st <= S_CTX;
        end
    end
    S_CTX: if (!d1_v) st <= S_CTX2;
    S_CTX2: begin
        c_pd   <= qp_rd_ctx[QP_CTX_W-1 -: 16];
        c_ring <= qp_rd_ctx[QP_CTX_W-17 -: 64];
        c_log2 <= qp_rd_ctx[2*CQ_W+9:2*CQ_W+5];
        c_cq   <= qp_rd_ctx[2*CQ_W-1:CQ_W];
        if (failp_r[cur]) begin
            failp_r[cur] <= 1'b0;
            c_fk  <= fk_r[cur];
            c_fst <= fst_r[cur];
            c_ftg <= ftg_r[cur];
            c_fle <= fle_r[cur];
            c_fcd <= fcd_r[cur];
            c_fhc <= fhc_r[cur];
            if (!err_r[cur]) st <= S_FAIL_EV;
            else st <= S_IDLE;
        end else if (retp_r[cur]) begin
            st <= S_RET;
        end else if (pf_st == PF_EMPTY) begin
            st <= S_FETCH;
        end else begin
            st <= pf_hit ? S_PFWAIT : S_PFDROP;
        end
    end
    // The prefetched entry: the one at ci, or one to drop first.
    S_PFWAIT: if (pf_st == PF_FULL) begin
        wqe <= pf_buf;
        if (pf_err) begin
            if (err_r[cur]) blk_r[cur] <= 1'b1;
            st <= err_r[cur] ? S_IDLE : S_FAIL_EV;
            c_fk <= FK_LOCAL;
        c_ftg <= 2'd0;
        c_fle <= 8'd0;
        c_fcd <= 8'd0;
        c_fhc <= 3'd0;
        end else begin
            st <= S_DEC;
        end
    end
    S_PFDROP: if (pf_st == PF_FULL) st <= S_FETCH;
    // fail (local): QP_ERROR, the Terminate, every outstanding Read flushed.
    S_FAIL_EV: if (eng_ev) st <= c_fk == FK_REMOTE ? S_FAIL_RM : S_FAIL_TD;
    S_FAIL_TD: if (tx_desc_ready) begin
        msn2_r[cur] <= msn2_r[cur] + 32'd1;
        t_beat <= 3'd0;
        st <= S_FAIL_TP;
    end
    S_FAIL_TP, S_FAIL_RM: if (fail_in) begin
        err_r[cur] <= 1'b1;
        reads_r[cur] <= 8'd0;
        if (f_tg_sq && reads_r[cur] != 8'd0) begin
            rerr_r[cur] <= 1'b1;
            rerr_st_r[cur] <= c_fst;
            rerr_tm_r[cur] <= {c_fcd, c_fle};
        end
        retp_r[cur] <= 1'b1;
        st <= S_RET;
    end
    // retire: the head of the pending list while done.
    S_RET: begin
        if (pcnt_r[cur] == {(PEND_LOG2+1){1'b0}}) begin
            retp_r[cur] <= 1'b0;
            rerr_r[cur] <= 1'b0;
            if (err_r[cur]) begin
                reads_r[cur] <= 8'd0;
                ans_r[cur] <= 8'd0;
            end
            st <= S_IDLE;
        end else begin
            st <= S_RET2;
        end
    end
    S_RET2: begin
        if (r_undone && !err_r[cur]) begin
            retp_r[cur] <= 1'b0;
            st <= S_IDLE;
        end else begin
            cqe_r <= cqe_f(r_id, r_clen, {{(16-CONN_W){1'b0}}, cur}, r_op, r_status, r_term);
            if (r_rerr) rerr_r[cur] <= 1'b0;
            if (r_read && !r_undone) ans_r[cur] <= ans_r[cur] - 8'd1;
            phead_r[cur] <= phead_r[cur] + 1'b1;
            pcnt_r[cur] <= pcnt_r[cur] - 1'b1;
            st <= (r_sig || r_status != 8'd0) ? S_RET_CQ : S_RET;
        end
    end
    S_RET_CQ: if (cq_ready) st <= S_RET;
    // fetch the entry at ci.
    S_FETCH: if (wqe_rd_req_ready) begin
        wqe_beat <= 3'd0;
        wqe_err <= 1'b0;
        st <= S_WQE;
    end
    S_WQE: if (wqe_rd_valid) begin
        wqe[wqe_beat * DATA_W +: DATA_W] <= wqe_rd_data;
        wqe_beat <= wqe_beat + 3'd1;
        if (wqe_rd_err) wqe_err <= 1'b1;
        if (wqe_rd_last) begin
            if (wqe_rd_err) begin
                // Refused (DMA_REFUSED from the DMA engine): the QP
                // fails; the entry stays at ci. The fail's flush fetches
                // it once more (the model's fail runs runSQ), refused
                // again in the error state: then it waits for the next
                // doorbell (the model's runSQ returns).
                if (err_r[cur]) blk_r[cur] <= 1'b1;
                st <= err_r[cur] ? S_IDLE : S_FAIL_EV;
                c_fk <= FK_LOCAL;
        c_ftg <= 2'd0;
        c_fle <= 8'd0;
        c_fcd <= 8'd0;
        c_fhc <= 3'd0;
            end else begin
                st <= S_DEC;
            end
        end
    end
    S_DEC: begin
        if (err_r[cur]) begin
            ci_r[cur] <= ci_r[cur] + 16'd1;
            cqe_r <= cqe_f(e_id, 32'd0, {{(16-CONN_W){1'b0}}, cur}, e_rawop, {5'd0, ST_FLUSHED}, 16'd0);
            st <= S_FLUSH_CQ;
        end else if (e_wait) begin
            blk_r[cur] <= 1'b1;
            st <= S_IDLE;
        end else begin
            ci_r[cur] <= ci_r[cur] + 16'd1;
            if (e_bad) begin
                push_st <= ST_BAD_WQE;
                push_fail <= 1'b1;
                st <= S_PUSH;
            end else if (e_len != 32'd0) begin
                st <= S_MR2;
            end else begin
                st <= S_ISSUE;
            end
        end
    end
    S_FLUSH_CQ: if (cq_ready) st <= S_IDLE;
    S_MR2: begin
        pay_addr <= m_addr + (e_lto - m_base);
        if (!m_ok) begin
            push_st <= ST_LOCAL_ACCESS;
            push_fail <= 1'b1;
            st <= S_PUSH;
        end else if (e_read) begin
            st <= S_ISSUE;
        end else begin
            st <= S_PAYREQ;
        end
    end
    S_PAYREQ: if (pay_rd_req_ready) st <= S_PAYFIRST;
    S_PAYFIRST: if (pay_rd_valid) begin
        if (pay_rd_err || e_invbad) begin
            pay_err <= pay_rd_err;
            st <= S_DRAIN;
        end else begin
            pay_err <= 1'b0;
            st <= S_ISSUE;
        end
    end
    S_DRAIN: if (pay_rd_valid && pay_rd_last) begin
        push_st <= pay_err ? ST_LOCAL_ACCESS : ST_BAD_WQE;
        push_fail <= 1'b1;
        st <= S_PUSH;
    end
    S_ISSUE: begin
        if (!e_read && e_invbad) begin
            // A zero-length Write or Send with an Invalidate STag.
            push_st <= ST_BAD_WQE;
            push_fail <= 1'b1;
            st <= S_PUSH;
        end else if (tx_desc_ready) begin
            push_st <= ST_SUCCESS;
            push_fail <= 1'b0;
            if (e_read) begin
                msn1_r[cur] <= msn1_r[cur] + 32'd1;
                reads_r[cur] <= reads_r[cur] + 8'd1;
                st <= S_PUSH;
            end else begin
                if (e_op != OP_WRITE) msn0_r[cur] <= msn0_r[cur] + 32'd1;
                st <= (e_len != 32'd0) ? S_STREAM : S_PUSH;
            end
        end
    end
    S_STREAM: if (pay_rd_valid && tx_axis_tready) begin
        if (pay_rd_err) pay_err <= 1'b1;
        if (pay_rd_last) begin
            if (pay_rd_err || pay_err) begin
                push_st <= ST_LOCAL_ACCESS;
                push_fail <= 1'b1;
            end
            st <= S_PUSH;
        end
    end
    S_PUSH: begin
        pcnt_r[cur] <= pcnt_r[cur] + 1'b1;
        c_fk <= FK_LOCAL;
        c_ftg <= 2'd0;
        c_fle <= 8'd0;
        c_fcd <= 8'd0;
        c_fhc <= 3'd0;
        if (push_fail) st <= S_FAIL_EV;
        else if (e_read) st <= S_IDLE;
        else st <= S_RET;
    end
    default: st <= S_IDLE;
    endcase

    if (st == S_FAIL_TP && tx_axis_tready && !t_last) begin
        t_beat <= t_beat + 3'd1;
    end

    // --- the prefetch ---
    case (pf_st)
    PF_EMPTY: if (pf_go) begin
        pf_st <= PF_REQ;
        pf_q <= cur;
        pf_idx <= ci_cur;
        pf_addr <= ring_addr;
        pf_stale <= 1'b0;
    end
    PF_REQ: if (wqe_rd_req_ready) begin
        pf_st <= PF_RECV;
        pf_beat <= 3'd0;
        pf_err <= 1'b0;
    end
    PF_RECV: if (wqe_rd_valid) begin
        pf_buf[pf_beat * DATA_W +: DATA_W] <= wqe_rd_data;
        pf_beat <= pf_beat + 3'd1;
        if (wqe_rd_err) pf_err <= 1'b1;
        if (wqe_rd_last) pf_st <= PF_FULL;
    end
    default: if (st == S_PFWAIT || st == S_PFDROP) pf_st <= PF_EMPTY;   // used or dropped
    endcase
    if (qp_state_wr_valid && qp_state_wr_qpn == pf_q) begin
        pf_stale <= 1'b1;
    end

    // --- admin pulses (last: they win) ---
    if (qp_state_wr_valid) begin
        run_r[qp_state_wr_qpn] <= 1'b0;
        failp_r[qp_state_wr_qpn] <= 1'b0;
        blk_r[qp_state_wr_qpn] <= 1'b0;
        if (qp_state_wr_state == QP_DRAINED) begin
            // QP_DRAIN (the model's drainQP): every entry fetched and not
            // done completes FLUSHED, in order behind the done ones; the
            // SQ fetches nothing more. (rnic_admin answers at once; the
            // completions follow.)
            err_r[qp_state_wr_qpn] <= 1'b1;
            retp_r[qp_state_wr_qpn] <= 1'b1;
        end else begin
            err_r[qp_state_wr_qpn] <= 1'b0;
            retp_r[qp_state_wr_qpn] <= 1'b0;
        end
        if (qp_state_wr_state == QP_CREATED) begin
            pi_r[qp_state_wr_qpn] <= 16'd0;
            ci_r[qp_state_wr_qpn] <= 16'd0;
            pcnt_r[qp_state_wr_qpn] <= {(PEND_LOG2+1){1'b0}};
        end
    end
    if (qp_rts_valid) begin
        run_r[qp_rts_qpn] <= 1'b1;
        err_r[qp_rts_qpn] <= 1'b0;
        failp_r[qp_rts_qpn] <= 1'b0;
        retp_r[qp_rts_qpn] <= 1'b0;
        blk_r[qp_rts_qpn] <= 1'b0;
        rerr_r[qp_rts_qpn] <= 1'b0;
        ord_r[qp_rts_qpn] <= qp_rts_params[219:212];
        mpdu_r[qp_rts_qpn] <= qp_rts_params[211:196];
        msn0_r[qp_rts_qpn] <= 32'd1;
        msn1_r[qp_rts_qpn] <= 32'd1;
        msn2_r[qp_rts_qpn] <= 32'd1;
        reads_r[qp_rts_qpn] <= 8'd0;
        ans_r[qp_rts_qpn] <= 8'd0;
        phead_r[qp_rts_qpn] <= {PEND_LOG2{1'b0}};
        pcnt_r[qp_rts_qpn] <= {(PEND_LOG2+1){1'b0}};
    end

    if (rst) begin
        d1_v <= 1'b0;
        d2_v <= 1'b0;
        evq_wp <= 2'd0;
        evq_rp <= 2'd0;
        evq_n <= 3'd0;
        st <= S_IDLE;
        pf_st <= PF_EMPTY;
        rr_ptr <= {CONN_W{1'b0}};
        run_r <= {QPS{1'b0}};
        err_r <= {QPS{1'b0}};
        blk_r <= {QPS{1'b0}};
        failp_r <= {QPS{1'b0}};
        retp_r <= {QPS{1'b0}};
        rerr_r <= {QPS{1'b0}};
        for (q = 0; q < QPS; q = q + 1) begin
            pi_r[q] <= 16'd0;
            ci_r[q] <= 16'd0;
            pcnt_r[q] <= {(PEND_LOG2+1){1'b0}};
            phead_r[q] <= {PEND_LOG2{1'b0}};
            reads_r[q] <= 8'd0;
            ans_r[q] <= 8'd0;
        end
    end
end

assign ci_rd_value = ci_r[ci_rd_qpn];   // QP_DRAIN's output word (rnic_admin)

endmodule

`resetall
