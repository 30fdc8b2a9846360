// rnic_rq: the device's RQ engine (docs/device.md, "Receive queue entry",
// "Completion queue entry", "Event ring"; issue 30). It takes the RQ
// doorbells, fetches each QP's 32-octet RQ entries through a DMA read client
// port, decodes them, checks the buffer in the MR table, posts it to
// ddp_rx's queue 0 (post_*), and turns each Send ddp_rx delivers (rcpl_*)
// into the receive CQE the Go model writes (driver/model/datapath.go:
// runRQ, fail, drainQP; rx.go: ulpdu's EventSend; doorbell.go:
// qpDoorbell). tests/rq checks every post, CQE and event against
// cmd/rnic-oracle's rq_run.
//
//   rqdb -> doorbell FIFO (8) -> QP context (qp_rd) -> checks -> pi[q] /
//                                DOORBELL_BAD, RING_OVERRUN events, fail_*
//   rcpl -> QP context -> receive CQE (cq_*), inv_* for an Invalidate
//   pick a QP with work (round robin) -> its context (qp_rd)
//     -> flush pending (qerr_*, QP_DRAIN): every posted entry completes,
//        the oldest with qerr's status, the rest FLUSHED
//     -> else fetch the entry at ci (wqe_rd), decode, MR check (mr_rd),
//        post it (post_*) or complete it (cq_*).
// The engine does one of these at a time, in that priority (doorbells,
// completions, QP work).
//
// Per QP (flip-flops): producer index pi (from the doorbell), consumer index
// ci, run (QP_RTS seen, until created again, free or drained), the error
// state (qerr_*), failing (fail_* reported, waiting for qerr_*), blocked (a
// refused fetch in the error state: waits for the next doorbell), flush
// pending with the oldest entry's status and Terminate octets, and the
// posted list: the WR IDs of the entries posted and not completed, oldest
// first, in a RAM of 2^POST_DEPTH_LOG2 a QP (sdp_ram), ddp_rx's ring depth:
// a QP whose list is full fetches nothing until a Send completes (the model
// posts every entry at once; the posts are the same, in the same order,
// only later).
//
// Checks, in the model's order (runRQ): a QP neither in RTS nor in error
// after it fetches nothing; a fetch with rd_err reports fail_* (fail_local
// 1: the model's refused + fail(local); the DMA engine reports DMA_REFUSED)
// and the entry stays at ci; in the error state every entry fetched
// completes FLUSHED (ID from octets 0..7); octets 24..31 not zero complete
// BAD_WQE; a non-zero length needs the MR entry of the local STag valid,
// with its key, the QP's PD, local write and the bounds, else LOCAL_ACCESS;
// then the buffer [address, address + length) must lie inside one DMA
// window (the model's hostMem: win_wr_*, the window table's copy kept
// here as the DMA engines keep theirs), else DMA_REFUSED (what 4,
// placement write; index the qpn, value the length, the address) and
// LOCAL_ACCESS; then the entry is posted (qn 0, the device address of the
// local TO, the length, the WR ID; address 0 for length 0). A BAD_WQE or LOCAL_ACCESS
// entry is not posted and the QP stays in RTS (the model continues).
//
// Completions (rcpl_*: a Send ddp_rx delivered into the QP's oldest posted
// buffer): the CQE {ID, the message's length, qpn, opcode 6 (Receive),
// SUCCESS, solicited for opcodes 5 and 6 (RFC 5040 4.2: with SE), the
// invalidated STag and its flag for 4 and 6} into the QP's recv CQ; for an
// Invalidate also inv_valid/inv_index (the MR entry's valid bit cleared, the
// model's d.t.MRs[..].Valid = false, RFC 5040 5.4: the lead's wiring into
// rnic_admin). A completion for a QP not in RTS or in error is consumed and
// dropped (the fail's flush already completed its buffer).
//
// QP error (qerr_*, the lead's pulse after fail_* or an error the receive
// side found): every posted entry completes, the oldest with qerr_status
// (and qerr_layer_etype/qerr_code in octets 21/22 when the status carries
// the Terminate, docs/device.md CQE: PROTOCOL, REMOTE, CONN), the rest
// FLUSHED; the entries fetched afterwards complete FLUSHED; a refused fetch
// is tried once more (the model's fail runs runRQ). QP_DRAIN (qp_state_wr
// state 3, the model's drainQP): every posted entry completes FLUSHED and
// the QP fetches nothing more.
//
// Doorbells (docs/device.md, RNDB; doorbell.go): a qpn beyond the QPs, a
// free QP (rnic_admin's state) or bits 31:16 set raises DOORBELL_BAD (detail
// 1 RQ, index qpn, value the word); a producer index more than the ring's
// size past ci raises RING_OVERRUN (value the index) and, on a QP in RTS,
// reports fail_* (local); the index is then not taken.
//
// Interface (/work/brief-dev-ifaces*.md; valid/ready, little-endian):
//   rqdb_*            RQ doorbells (rnic_dev), one-clock pulses, one a clock
//                     at most, into an 8-entry FIFO; dropped_db pulses when
//                     one found it full (the doorbell is lost)
//   qp_state_wr_*, qp_rts_*   rnic_admin's pulses (created: indices 0;
//                     QP_RTS: the engine runs the QP; drained: flush, stop;
//                     free: stop)
//   win_wr_*          rnic_admin's DMA window pulses (as rnic_dma_rd's)
//   qp_rd_*, mr_rd_*  the shared admin read ports (req held until gnt, the
//                     data in the next clock)
//   wqe_rd_*          DMA read client port (what 2, RQ WQE fetch), 32 octets
//   post_*            ddp_rx's s_post (queue 0)
//   rcpl_*            ddp_rx's Send completions
//   inv_*             one-clock pulse: the MR entry a Send with Invalidate
//                     invalidated
//   fail_*            a local fault of the QP (fail_local 1, layer/etype and
//                     code 0: RDMAP Local Catastrophic, RFC 5040 7)
//   qerr_*            the QP entered error (lead), one-clock pulse
//   cq_*              completion records (cqn: the QP's recv CQ; octets
//                     0..30 of the CQE)
//   ev_*              events (octets 0..14), through a 4-entry FIFO (the
//                     doorbell stage waits while it is full)
//
// Cycles (no back-pressure, gnt at once): a doorbell takes 3 clocks of the
// engine (context read, check; 1 more for an event); an entry 9 plus the
// DMA latency and 32/(DATA_W/8) beats (context, fetch request, beats,
// decode, MR read, check, post); a completion 5 (context, record, CQ, the
// rcpl handshake). Each admin read waits for its gnt, each record for its
// ready. The engine does one thing at a time: posts and completions do not
// overlap.
//
// Not done (the model does it): a ring overrun on a QP not yet in RTS (the model moves it to
// error silently and refuses QP_RTS; here rnic_admin's state decides); a
// BAD_WQE or LOCAL_ACCESS entry behind a full posted list completes after
// the Sends that free room, where the model completes it at the doorbell.
//
// Parameters: as rnic_dev's (the unused ones accepted for uniform
// instantiation), and POST_DEPTH_LOG2, ddp_rx's queue-0 ring depth.

`resetall
`timescale 1ns / 1ps
`default_nettype none

/* verilator lint_off UNUSEDPARAM */
module rnic_rq #(
    parameter DATA_W    = 64,
    parameter CONN_W    = 6,
    parameter STAG_AW   = 10,
    parameter CQ_W      = 6,
    parameter VEC_W     = 2,
    parameter WIN_W     = 4,
    parameter SQ_LOG2   = 10,
    parameter RQ_LOG2   = 10,
    parameter CQ_LOG2   = 12,
    parameter POST_DEPTH_LOG2 = 4
) (
/* verilator lint_on UNUSEDPARAM */
    input  wire                  clk,
    input  wire                  rst,

    input  wire                  rqdb_valid,
    input  wire [11:0]           rqdb_qpn,
    input  wire [31:0]           rqdb_value,
    output wire                  dropped_db,

    input  wire                  qp_state_wr_valid,
    input  wire [CONN_W-1:0]     qp_state_wr_qpn,
    input  wire [1:0]            qp_state_wr_state,
    input  wire                  qp_rts_valid,
    input  wire [CONN_W-1:0]     qp_rts_qpn,
    input  wire [227:0]          qp_rts_params,

    input  wire                  win_wr_valid,
    input  wire [WIN_W-1:0]      win_wr_slot,
    input  wire [63:0]           win_wr_addr,
    input  wire [63:0]           win_wr_len,

    output wire                  qp_rd_req,
    input  wire                  qp_rd_gnt,
    output wire [CONN_W-1:0]     qp_rd_qpn,
    input  wire [1:0]            qp_rd_state,
    input  wire [16+64+64+5+5+2*CQ_W-1:0] qp_rd_ctx,
    output wire                  mr_rd_req,
    input  wire                  mr_rd_gnt,
    output wire [STAG_AW-1:0]    mr_rd_index,
    input  wire                  mr_rd_valid,
    input  wire [235:0]          mr_rd_entry,

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

    output wire                  post_valid,
    input  wire                  post_ready,
    output wire [CONN_W-1:0]     post_conn,
    output wire [1:0]            post_qn,
    output wire [63:0]           post_addr,
    output wire [31:0]           post_len,
    output wire [63:0]           post_id,

    input  wire                  rcpl_valid,
    output wire                  rcpl_ready,
    input  wire [CONN_W-1:0]     rcpl_conn,
    input  wire [3:0]            rcpl_opcode,
    input  wire [31:0]           rcpl_msn,
    input  wire [31:0]           rcpl_len,
    input  wire [63:0]           rcpl_id,
    input  wire [31:0]           rcpl_inv_stag,

    output wire                  inv_valid,
    output wire [STAG_AW-1:0]    inv_index,

    output wire                  fail_valid,
    input  wire                  fail_ready,
    output wire [CONN_W-1:0]     fail_qpn,
    output wire                  fail_local,
    output wire [7:0]            fail_layer_etype,
    output wire [7:0]            fail_code,

    input  wire                  qerr_valid,
    input  wire [CONN_W-1:0]     qerr_qpn,
    input  wire [7:0]            qerr_status,
    input  wire [7:0]            qerr_layer_etype,
    input  wire [7:0]            qerr_code,

    output wire                  cq_valid,
    input  wire                  cq_ready,
    output wire [CQ_W-1:0]       cq_cqn,
    output wire [247:0]          cq_entry,

    output wire                  ev_valid,
    input  wire                  ev_ready,
    output wire [119:0]          ev_entry,

    // QP_DRAIN's output word (rnic_admin): the consumer index of QP ci_rd_qpn
    // (combinational, read-only).
    input  wire [CONN_W-1:0]     ci_rd_qpn,
    output wire [15:0]           ci_rd_value,

    // The receive hold (rnic_dev's network input): bit q is set while a
    // receive posted on QP q (its doorbell in) is not yet in ddp_rx.
    output wire [(1<<CONN_W)-1:0] rx_hold
);

localparam QPS    = 1 << CONN_W;
localparam [POST_DEPTH_LOG2:0] POST_N = 1 << POST_DEPTH_LOG2;
localparam QP_CTX_W = 16 + 64 + 64 + 5 + 5 + 2 * CQ_W;
localparam WB     = DATA_W > 256 ? DATA_W : 256;   // the entry buffer

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_rq: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (CONN_W < 1 || CONN_W > 12 || STAG_AW < 1 || STAG_AW > 16 || POST_DEPTH_LOG2 < 1 || POST_DEPTH_LOG2 > 8) begin
        $error("rnic_rq: CONN_W 1..12, STAG_AW 1..16, POST_DEPTH_LOG2 1..8; got %0d, %0d, %0d",
               CONN_W, STAG_AW, POST_DEPTH_LOG2);
        $finish;
    end
end

// Statuses (docs/device.md), event types, QP states.
localparam [7:0] ST_SUCCESS = 8'd0, ST_FLUSHED = 8'd1, ST_BAD_WQE = 8'd2, ST_LOCAL_ACCESS = 8'd3,
                 ST_PROTOCOL = 8'd5, ST_REMOTE = 8'd6, ST_CONN = 8'd7;
localparam [7:0] EV_DOORBELL_BAD = 8'd4, EV_RING_OVERRUN = 8'd5, EV_DMA_REFUSED = 8'd7;
localparam [7:0] FOR_PLACEMENT = 8'd4;   // DMA_REFUSED's what: a placement write
localparam [1:0] QP_FREE = 2'd0, QP_CREATED = 2'd1, QP_DRAINED = 2'd3;
localparam [2:0] OP_RECV = 3'd6;

// ---------------------------------------------------------------------------
// Per-QP state.
reg [15:0] pi_r   [0:QPS-1];
reg [15:0] ci_r   [0:QPS-1];
reg [POST_DEPTH_LOG2-1:0] phead_r [0:QPS-1];
reg [POST_DEPTH_LOG2:0]   pcnt_r  [0:QPS-1];
reg [7:0]  fst_r  [0:QPS-1];     // the oldest posted entry's flush status
reg [15:0] ftm_r  [0:QPS-1];     // and its Terminate octets {code, layer/etype}
reg [QPS-1:0] run_r;     // QP_RTS seen (until created again, free or drained)
reg [QPS-1:0] err_r;     // the error state
reg [QPS-1:0] failing_r; // fail_* reported, waiting for qerr_*
reg [QPS-1:0] blk_r;     // a refused fetch in error: waits for a doorbell
reg [QPS-1:0] flushp_r;  // posted entries to flush

// ---------------------------------------------------------------------------
// The event FIFO (4 entries).
reg [119:0] evq [0:3];
reg [1:0]   evq_wp, evq_rp;
reg [2:0]   evq_n;
wire        evq_full = evq_n == 3'd4;
assign ev_valid = evq_n != 3'd0;
assign ev_entry = evq[evq_rp];

function automatic [119:0] event_f(input [7:0] typ, input [15:0] index, input [31:0] value);
    event_f = {56'd0, value, index, 8'd1, typ};   // detail 1: the RQ doorbell
endfunction

// ---------------------------------------------------------------------------
// The doorbell FIFO (8 entries): the checks need the QP's context, whose
// read port is shared.
reg [43:0] dbq [0:7];
reg [2:0]  dbq_wp, dbq_rp;
reg [3:0]  dbq_n;
wire       dbq_full = dbq_n == 4'd8;
wire       dbq_push = rqdb_valid && !dbq_full;
wire [11:0] db_q   = dbq[dbq_rp][43:32];
wire [31:0] db_val = dbq[dbq_rp][31:0];
wire        db_inrange = db_q < QPS;
wire [CONN_W-1:0] db_qpn = db_q[CONN_W-1:0];
assign dropped_db = rqdb_valid && dbq_full;

// ---------------------------------------------------------------------------
// The engine.
localparam [4:0] S_IDLE = 5'd0, S_DB = 5'd1, S_DB2 = 5'd2, S_DB_EV = 5'd3, S_RC = 5'd4, S_RC2 = 5'd5,
                 S_RC_CQ = 5'd6, S_RC_ACK = 5'd7, S_CTX = 5'd8, S_CTX2 = 5'd9, S_FL = 5'd10,
                 S_FL2 = 5'd11, S_FL_CQ = 5'd12, S_FETCH = 5'd13, S_WQE = 5'd14, S_DEC = 5'd15,
                 S_MR = 5'd16, S_MR2 = 5'd17, S_POST = 5'd18, S_CQ = 5'd19, S_FAIL = 5'd20,
                 S_WIN = 5'd21, S_WREF = 5'd22;

reg [4:0]        st;
reg [CONN_W-1:0] cur;
reg [CONN_W-1:0] rr_ptr;
reg [WB-1:0]     wqe;
reg [1:0]        wqe_beat;
reg [15:0]       c_pd;
reg [63:0]       c_ring;
reg [4:0]        c_log2;
reg [CQ_W-1:0]   c_cq;
reg [247:0]      cqe_r;
reg [119:0]      db_ev;
reg              db_fail;     // after the event: report the QP's fail
reg [63:0]       post_addr_r;

wire [15:0] ci_cur   = ci_r[cur];
wire [63:0] ring_addr = c_ring + ({48'd0, ci_cur & ((16'd1 << c_log2) - 16'd1)} << 5);

// The doorbell check (S_DB2, qp_rd's data): qpDoorbell's order.
wire [4:0]  db_log2 = qp_rd_ctx[2*CQ_W+4:2*CQ_W];
wire [15:0] db_diff = db_val[15:0] - ci_r[db_qpn];
wire        db_bad  = !db_inrange || qp_rd_state == QP_FREE || db_val[31:16] != 16'd0;
wire        db_over = !db_bad && ({1'b0, db_diff} > (17'd1 << db_log2));

// The fetched entry's fields (docs/device.md, "Receive queue entry").
wire [63:0] e_id   = wqe[63:0];
wire [31:0] e_lkey = wqe[95:64];
wire [31:0] e_len  = wqe[127:96];
wire [63:0] e_lto  = wqe[191:128];
wire        e_bad  = wqe[255:192] != 64'd0;

// The MR check (mrCheck, local write): {key, access, pd, bound, base_to,
// len, addr}.
wire [7:0]  m_key  = mr_rd_entry[235:228];
wire [3:0]  m_acc  = mr_rd_entry[227:224];
wire [15:0] m_pd   = mr_rd_entry[223:208];
wire [63:0] m_base = mr_rd_entry[191:128];
wire [63:0] m_mlen = mr_rd_entry[127:64];
wire [63:0] m_addr = mr_rd_entry[63:0];
wire [64:0] m_end  = {1'b0, e_lto} + {33'd0, e_len};
wire [64:0] m_lim  = {1'b0, m_base} + {1'b0, m_mlen};
wire        m_idx_ok = (e_lkey[31:8] >> STAG_AW) == 24'd0;
wire        m_ok   = m_idx_ok && mr_rd_valid && m_key == e_lkey[7:0] && m_pd == c_pd && m_acc[1] &&
                     e_lto >= m_base && !m_end[64] && m_end <= m_lim;

// The completion (rcpl_*): RFC 5040 4.2 opcodes 3..6.
wire        rc_se  = rcpl_opcode == 4'd5 || rcpl_opcode == 4'd6;
wire        rc_inv = rcpl_opcode == 4'd4 || rcpl_opcode == 4'd6;

function automatic [247:0] cqe_f(input [63:0] id, input [31:0] len, input [15:0] qpn, input [7:0] status,
                                 input [31:0] inv, input [7:0] flags, input [15:0] term);
    cqe_f = {64'd0, term, flags, inv, status, 5'd0, OP_RECV, qpn, len, id};
endfunction
wire [15:0] cur16 = {{(16-CONN_W){1'b0}}, cur};

// The posted list's RAM (the WR IDs).
wire                               pr_we = st == S_POST && post_ready;
wire [CONN_W+POST_DEPTH_LOG2-1:0]  pr_waddr = {cur, phead_r[cur] + pcnt_r[cur][POST_DEPTH_LOG2-1:0]};
wire                               pr_re = st == S_FL;
wire [CONN_W+POST_DEPTH_LOG2-1:0]  pr_raddr = {cur, phead_r[cur]};
wire [63:0]                        pr_rdata;
sdp_ram #(.WIDTH(64), .ADDR_W(CONN_W + POST_DEPTH_LOG2)) u_posted (
    .clk(clk), .wr_en(pr_we), .wr_addr(pr_waddr), .wr_data(e_id),
    .rd_en(pr_re), .rd_addr(pr_raddr), .rd_data(pr_rdata));
// The oldest takes the flush status (and the Terminate octets when the
// status carries them), the rest FLUSHED.
wire [7:0]  f_st   = fst_r[cur];
wire        f_term = f_st == ST_PROTOCOL || f_st == ST_REMOTE || f_st == ST_CONN;

// Work of a QP: a flush, or an entry to fetch.
reg [QPS-1:0] ready_v;
integer k;
always @* begin
    for (k = 0; k < QPS; k = k + 1) begin
        ready_v[k] = flushp_r[k] ||
                     (run_r[k] && !failing_r[k] && !blk_r[k] && ci_r[k] != pi_r[k] &&
                      (err_r[k] || pcnt_r[k] != POST_N));
    end
end
// The receive hold: a QP in RTS (not failing, not in error) with entries
// between ci and pi that it will fetch (its posted list has room: a full
// list means ddp_rx has buffers), or the QP whose entry the engine is
// fetching, checking or posting (ci moves at S_DEC, the post is taken at
// S_POST); and every QP while an RQ doorbell is in the FIFO or being
// taken (pi is not yet written). ddp_rx takes each post before the pieces
// after it, so a segment that waits at the network input for its QP's bit
// to fall finds every receive posted before it (docs/device.md, "Receive
// queue entry": a posted receive is never missed).
wire       rh_db  = rqdb_valid || dbq_n != 4'd0 || st == S_DB || st == S_DB2 || st == S_DB_EV;
wire       rh_cur = st == S_CTX || st == S_CTX2 || st == S_FETCH || st == S_WQE || st == S_DEC ||
                    st == S_MR || st == S_MR2 || st == S_WIN || st == S_POST;
reg [QPS-1:0] rh_v;
integer       rh_k;
always @* begin
    for (rh_k = 0; rh_k < QPS; rh_k = rh_k + 1) begin
        rh_v[rh_k] = rh_db ||
                     (run_r[rh_k] && !failing_r[rh_k] && !blk_r[rh_k] && !err_r[rh_k] &&
                      ci_r[rh_k] != pi_r[rh_k] && pcnt_r[rh_k] != POST_N) ||
                     (rh_cur && cur == rh_k[CONN_W-1:0] && !err_r[rh_k]);
    end
end
assign rx_hold = rh_v;

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

// Admin read ports.
assign qp_rd_req   = (st == S_DB && db_inrange) || st == S_RC || st == S_CTX;
assign qp_rd_qpn   = st == S_DB ? db_qpn : st == S_RC ? rcpl_conn : cur;
assign mr_rd_req   = st == S_MR;
assign mr_rd_index = e_lkey[STAG_AW+7:8];

// DMA.
assign wqe_rd_req_valid = st == S_FETCH;
assign wqe_rd_req_addr  = ring_addr;
assign wqe_rd_req_len   = 32'd32;
assign wqe_rd_req_what  = 3'd2;
assign wqe_rd_ready     = st == S_WQE;

// ddp_rx.
assign post_valid = st == S_POST;
assign post_conn  = cur;
assign post_qn    = 2'd0;
assign post_addr  = post_addr_r;
assign post_len   = e_len;
assign post_id    = e_id;
assign rcpl_ready = st == S_RC_ACK;

assign inv_valid = st == S_RC_CQ && cq_ready && rc_inv;
assign inv_index = rcpl_inv_stag[STAG_AW+7:8];

assign fail_valid       = st == S_FAIL;
assign fail_qpn         = cur;
assign fail_local       = 1'b1;
assign fail_layer_etype = 8'd0;
assign fail_code        = 8'd0;

assign cq_valid = st == S_RC_CQ || st == S_FL_CQ || st == S_CQ;
assign cq_cqn   = c_cq;
assign cq_entry = cqe_r;

wire eng_ev = (st == S_DB_EV || st == S_WREF) && !evq_full;

// ---------------------------------------------------------------------------
// The DMA window table (rnic_admin's pulses) and the posted buffer's check:
// [post_addr_r, + e_len) inside one non-empty window (the model's
// inWindow; an end past 2^64 refused).
localparam WINDOWS = 1 << WIN_W;
reg [63:0]        win_a [0:WINDOWS-1];
reg [64:0]        win_e [0:WINDOWS-1];
reg [WINDOWS-1:0] win_nz;
always @(posedge clk) begin
    if (win_wr_valid) begin
        win_a[win_wr_slot] <= win_wr_addr;
        win_e[win_wr_slot] <= {1'b0, win_wr_addr} + {1'b0, win_wr_len};
        win_nz[win_wr_slot] <= win_wr_len != 64'd0;
    end
    if (rst) win_nz <= {WINDOWS{1'b0}};
end
wire [64:0] buf_end = {1'b0, post_addr_r} + {33'd0, e_len};
reg         buf_in_win;
integer     wi;
always @* begin
    buf_in_win = 1'b0;
    for (wi = 0; wi < WINDOWS; wi = wi + 1) begin
        if (win_nz[wi] && post_addr_r >= win_a[wi] && buf_end <= win_e[wi]) buf_in_win = 1'b1;
    end
end

/* verilator lint_off UNUSEDSIGNAL */
wire unused = &{1'b0, wqe_rd_keep, qp_rts_params, rcpl_msn, m_acc[3:2], m_acc[0], mr_rd_entry[207:192],
                qp_rd_ctx[QP_CTX_W-17:QP_CTX_W-80], qp_rd_ctx[2*CQ_W+9:2*CQ_W+5], qp_rd_ctx[2*CQ_W-1:CQ_W],
                wqe};
/* verilator lint_on UNUSEDSIGNAL */

integer q;
always @(posedge clk) begin
    // --- the doorbell FIFO ---
    if (dbq_push) begin
        dbq[dbq_wp] <= {rqdb_qpn, rqdb_value};
        dbq_wp <= dbq_wp + 3'd1;
    end
    dbq_n <= dbq_n + {3'd0, dbq_push} - {3'd0, st == S_DB2};
    if (st == S_DB2) dbq_rp <= dbq_rp + 3'd1;

    // --- the event FIFO ---
    if (eng_ev) begin
        evq[evq_wp] <= db_ev;
        evq_wp <= evq_wp + 2'd1;
    end
    if (ev_valid && ev_ready) begin
        evq_rp <= evq_rp + 2'd1;
    end
    evq_n <= evq_n + {2'd0, eng_ev} - {2'd0, ev_valid && ev_ready};

    // --- the engine ---
    case (st)
    S_IDLE: begin
        if (dbq_n != 4'd0) begin
            st <= S_DB;
        end else if (rcpl_valid) begin
            st <= S_RC;
        end else if (pick_v) begin
            cur <= pick_q;
            rr_ptr <= pick_q + 1'b1;
            st <= S_CTX;
        end
    end
    // A doorbell (qpDoorbell).
    S_DB: if (qp_rd_gnt || !db_inrange) st <= S_DB2;
    S_DB2: begin
        db_fail <= 1'b0;
        if (db_bad) begin
            db_ev <= event_f(EV_DOORBELL_BAD, {4'd0, db_q}, db_val);
            st <= S_DB_EV;
        end else if (db_over) begin
            db_ev <= event_f(EV_RING_OVERRUN, {4'd0, db_q}, {16'd0, db_val[15:0]});
            cur <= db_qpn;
            if (run_r[db_qpn] && !err_r[db_qpn] && !failing_r[db_qpn]) begin
                db_fail <= 1'b1;
                failing_r[db_qpn] <= 1'b1;
            end
            st <= S_DB_EV;
        end else begin
            pi_r[db_qpn] <= db_val[15:0];
            blk_r[db_qpn] <= 1'b0;    // a refused fetch in error is tried again
            st <= S_IDLE;
        end
    end
    S_DB_EV: if (eng_ev) st <= db_fail ? S_FAIL : S_IDLE;
    // A Send delivered (ulpdu, EventSend).
    S_RC: if (qp_rd_gnt) st <= S_RC2;
    S_RC2: begin
        c_cq <= qp_rd_ctx[CQ_W-1:0];
        cqe_r <= cqe_f(rcpl_id, rcpl_len, {{(16-CONN_W){1'b0}}, rcpl_conn}, ST_SUCCESS,
                       rc_inv ? rcpl_inv_stag : 32'd0, {6'd0, rc_inv, rc_se}, 16'd0);
        if (run_r[rcpl_conn] && !err_r[rcpl_conn] && pcnt_r[rcpl_conn] != {(POST_DEPTH_LOG2+1){1'b0}}) begin
            phead_r[rcpl_conn] <= phead_r[rcpl_conn] + 1'b1;
            pcnt_r[rcpl_conn] <= pcnt_r[rcpl_conn] - 1'b1;
            st <= S_RC_CQ;
        end else begin
            st <= S_RC_ACK;     // dropped
        end
    end
    S_RC_CQ: if (cq_ready) st <= S_RC_ACK;
    S_RC_ACK: st <= S_IDLE;
    // A QP's work: its context, then a flush or a fetch.
    S_CTX: if (qp_rd_gnt) st <= S_CTX2;
    S_CTX2: begin
        c_pd   <= qp_rd_ctx[QP_CTX_W-1 -: 16];
        c_ring <= qp_rd_ctx[QP_CTX_W-81 -: 64];
        c_log2 <= qp_rd_ctx[2*CQ_W+4:2*CQ_W];
        c_cq   <= qp_rd_ctx[CQ_W-1:0];
        st <= flushp_r[cur] ? S_FL : S_FETCH;
    end
    // The flush (fail, drainQP): the posted list, oldest first.
    S_FL: begin
        if (pcnt_r[cur] == {(POST_DEPTH_LOG2+1){1'b0}}) begin
            flushp_r[cur] <= 1'b0;
            st <= S_IDLE;
        end else begin
            st <= S_FL2;
        end
    end
    S_FL2: begin
        cqe_r <= cqe_f(pr_rdata, 32'd0, cur16, f_st, 32'd0, 8'd0, f_term ? ftm_r[cur] : 16'd0);
        fst_r[cur] <= ST_FLUSHED;
        phead_r[cur] <= phead_r[cur] + 1'b1;
        pcnt_r[cur] <= pcnt_r[cur] - 1'b1;
        st <= S_FL_CQ;
    end
    S_FL_CQ: if (cq_ready) st <= S_FL;
    // The entry at ci (runRQ).
    S_FETCH: if (wqe_rd_req_ready) begin
        wqe_beat <= 2'd0;
        st <= S_WQE;
    end
    S_WQE: if (wqe_rd_valid) begin
        wqe[wqe_beat * DATA_W +: DATA_W] <= wqe_rd_data;
        wqe_beat <= wqe_beat + 2'd1;
        if (wqe_rd_last) begin
            if (wqe_rd_err) begin
                // Refused (DMA_REFUSED from the DMA engine): the QP
                // fails and the entry stays at ci. In the error state
                // (the fail's runRQ) it waits for the next doorbell.
                if (err_r[cur]) begin
                    blk_r[cur] <= 1'b1;
                    st <= S_IDLE;
                end else begin
                    failing_r[cur] <= 1'b1;
                    st <= S_FAIL;
                end
            end else begin
                st <= S_DEC;
            end
        end
    end
    S_DEC: begin
        ci_r[cur] <= ci_r[cur] + 16'd1;
        post_addr_r <= 64'd0;
        if (err_r[cur]) begin
            cqe_r <= cqe_f(e_id, 32'd0, cur16, ST_FLUSHED, 32'd0, 8'd0, 16'd0);
            st <= S_CQ;
        end else if (e_bad) begin
            cqe_r <= cqe_f(e_id, 32'd0, cur16, ST_BAD_WQE, 32'd0, 8'd0, 16'd0);
            st <= S_CQ;
        end else if (e_len != 32'd0) begin
            st <= S_MR;
        end else begin
            st <= S_POST;
        end
    end
    S_MR: if (mr_rd_gnt) st <= S_MR2;
    S_MR2: begin
        post_addr_r <= m_addr + (e_lto - m_base);
        if (m_ok) begin
            st <= S_WIN;
        end else begin
            cqe_r <= cqe_f(e_id, 32'd0, cur16, ST_LOCAL_ACCESS, 32'd0, 8'd0, 16'd0);
            st <= S_CQ;
        end
    end
    S_WIN: begin
        if (buf_in_win) begin
            st <= S_POST;
        end else begin
            // the model's refused(placement) and LOCAL_ACCESS: nothing posted
            db_ev <= {post_addr_r[55:0], e_len, cur16, FOR_PLACEMENT, EV_DMA_REFUSED};
            cqe_r <= cqe_f(e_id, 32'd0, cur16, ST_LOCAL_ACCESS, 32'd0, 8'd0, 16'd0);
            st <= S_WREF;
        end
    end
    S_WREF: if (eng_ev) st <= S_CQ;
    S_POST: if (post_ready) begin
        pcnt_r[cur] <= pcnt_r[cur] + 1'b1;
        st <= S_IDLE;
    end
    S_CQ: if (cq_ready) st <= S_IDLE;
    S_FAIL: if (fail_ready) st <= S_IDLE;
    default: st <= S_IDLE;
    endcase

    // --- the lead's QP error pulse (fail's flush) ---
    if (qerr_valid) begin
        err_r[qerr_qpn] <= 1'b1;
        failing_r[qerr_qpn] <= 1'b0;
        blk_r[qerr_qpn] <= 1'b0;     // the refused entry is fetched once more
        flushp_r[qerr_qpn] <= 1'b1;
        fst_r[qerr_qpn] <= qerr_status;
        ftm_r[qerr_qpn] <= {qerr_code, qerr_layer_etype};
    end

    // --- admin pulses (last: they win) ---
    if (qp_state_wr_valid) begin
        run_r[qp_state_wr_qpn] <= 1'b0;
        failing_r[qp_state_wr_qpn] <= 1'b0;
        blk_r[qp_state_wr_qpn] <= 1'b0;
        if (qp_state_wr_state == QP_DRAINED) begin
            // QP_DRAIN (drainQP): every posted entry completes FLUSHED;
            // the RQ fetches nothing more.
            err_r[qp_state_wr_qpn] <= 1'b1;
            flushp_r[qp_state_wr_qpn] <= 1'b1;
            fst_r[qp_state_wr_qpn] <= ST_FLUSHED;
        end else begin
            err_r[qp_state_wr_qpn] <= 1'b0;
            flushp_r[qp_state_wr_qpn] <= 1'b0;
        end
        if (qp_state_wr_state == QP_CREATED) begin
            pi_r[qp_state_wr_qpn] <= 16'd0;
            ci_r[qp_state_wr_qpn] <= 16'd0;
            phead_r[qp_state_wr_qpn] <= {POST_DEPTH_LOG2{1'b0}};
            pcnt_r[qp_state_wr_qpn] <= {(POST_DEPTH_LOG2+1){1'b0}};
        end
    end
    if (qp_rts_valid) begin
        run_r[qp_rts_qpn] <= 1'b1;
        err_r[qp_rts_qpn] <= 1'b0;
        failing_r[qp_rts_qpn] <= 1'b0;
        blk_r[qp_rts_qpn] <= 1'b0;
        flushp_r[qp_rts_qpn] <= 1'b0;
        phead_r[qp_rts_qpn] <= {POST_DEPTH_LOG2{1'b0}};
        pcnt_r[qp_rts_qpn] <= {(POST_DEPTH_LOG2+1){1'b0}};
    end

    if (rst) begin
        dbq_wp <= 3'd0;
        dbq_rp <= 3'd0;
        dbq_n <= 4'd0;
        evq_wp <= 2'd0;
        evq_rp <= 2'd0;
        evq_n <= 3'd0;
        st <= S_IDLE;
        rr_ptr <= {CONN_W{1'b0}};
        db_fail <= 1'b0;
        run_r <= {QPS{1'b0}};
        err_r <= {QPS{1'b0}};
        failing_r <= {QPS{1'b0}};
        blk_r <= {QPS{1'b0}};
        flushp_r <= {QPS{1'b0}};
        for (q = 0; q < QPS; q = q + 1) begin
            pi_r[q] <= 16'd0;
            ci_r[q] <= 16'd0;
            pcnt_r[q] <= {(POST_DEPTH_LOG2+1){1'b0}};
            phead_r[q] <= {POST_DEPTH_LOG2{1'b0}};
            fst_r[q] <= ST_FLUSHED;
            ftm_r[q] <= 16'd0;
        end
    end
end

assign ci_rd_value = ci_r[ci_rd_qpn];   // QP_DRAIN's output word (rnic_admin)

endmodule

`resetall
