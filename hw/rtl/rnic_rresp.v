// rnic_rresp: the device's Read responder (issue 30; RFC 5040 4.4, 5.2, 7).
// It answers the peer's RDMA Read Requests: for each Read Request ddp_rx
// delivered into a Read Request queue buffer (queue 1), it checks the
// source in the MR table, reads the source through a DMA read client port
// and hands rnic_tx a Read Response descriptor and its payload, then posts
// the queue 1 buffer again; a request that fails a check is reported as a
// QP failure (fail_*) and the QP is served no more. It also posts each
// QP's receive buffers for the Read Request and Terminate queues when the
// QP enters RTS. The Go model is the behaviour contract
// (driver/model/datapath.go: startQP; rx.go: readResponse, ulpdu's
// EventReadRequest case, unmapped; iwarp/rdmap: ReadSource); tests/rresp
// compares rnic_tx's FPDUs and the fail reports with it through
// cmd/rnic-oracle's rr_run.
//
//   rreq -> A: take -> MR read (mr_rd, req/gnt) -> checks -> payload read
//              request (pay_rd_req) -> job FIFO (2 entries) ->
//           C: first beat (rd_err?) -> tx_desc -> payload (pay_rd ->
//              tx_axis) -> repost the queue 1 buffer
//                                   or fail_* (check failed, or refused)
//   qp_rts -> post counts -> P: one post a clock (post_*), round robin
//
// A checks request N+1 (and issues its payload read) while C streams
// request N's payload, so that on back-to-back Reads rnic_tx gets the next
// descriptor a few clocks after the last payload beat; the DMA port answers
// in request order, so C finds N+1's frame right behind N's.
//
// Per QP (flip-flops): the PD (from CREATE_QP's qp_state_wr_pd), the
// MULPDU and IRD (from QP_RTS), served (QP_RTS seen, no failure since: A
// takes requests of served QPs only and drops the others), failed (C has
// reported the QP's failure: C drops the QP's jobs still queued behind
// it), the queue 1 buffers to post (0..2^POST_DEPTH_LOG2) and the
// Terminate buffer to post (one bit). Any qp_state_wr pulse (created,
// drained, free) stops serving the QP and drops its pending posts; QP_RTS
// starts it: min(IRD, 2^POST_DEPTH_LOG2) queue 1 buffers and one Terminate
// buffer to post, as startQP posts IRD and one (an IRD above
// 2^POST_DEPTH_LOG2 posts only 2^POST_DEPTH_LOG2 buffers, ddp_rx's ring:
// a peer that keeps more Reads outstanding than that finds no buffer, a
// DDP error in ddp_rx, where the model would answer them). The lead
// changes a QP's state only while none of its requests is in flight here.
//
// Posts (post_*): queue 1 (Read Request) buffers of rdmap.ReadRequestLen
// (28) octets, queue 2 (Terminate) buffers of rdmap.MaxTerminateLen (52)
// octets, id 0, at device-internal addresses (bit 63 set; bits 15:0 the
// qpn, 17:16 the queue). Never more than 2^POST_DEPTH_LOG2 of one (QP,
// queue) posted and not completed: at most IRD (clamped) are, a served
// request's buffer is posted again only after it completed.
//
// Checks (A), in rdmap.ReadSource's order (ddp.STagTable's checkLocked),
// only for a size above 0 (a zero-size Read checks nothing and is
// answered with an empty Read Response, RFC 5040 5.2, as the model):
//   source STag index beyond the MR table, entry not valid, key differs:
//       Invalid STag (code 0)
//   the MR's PD is not the QP's, or the MR is bound to another QP (bound
//       qpn not 0xFFFF and not this QP's): STag not associated (3)
//   no remote read access (MR access bit 2): Access rights (2)
//   source TO + size carries out of 64 bits (a sum of 2^64 included):
//       TO wrap (4)
//   source TO below the MR's base TO, or TO + size past base + length:
//       Base or bounds (1)
// all layer RDMAP, etype Remote Protection (fail_layer_etype 8'h01),
// fail_local 0. Then the payload read (what 3): rd_err on its first beat
// (refused by the window check: the DMA engine reports DMA_REFUSED) fails
// the QP with fail_local 1 (RDMAP Local Catastrophic, layer/etype 0, code
// 0), as the model's unmapped/refused path; nothing is sent for it.
// A failed request sends nothing and is not reposted; the QP is served no
// more (the lead sends the Terminate, raises QP_ERROR, flushes).
//
// Interface (brief-dev-ifaces.md, brief-dev-ifaces2.md; valid/ready):
//   qp_state_wr_*, qp_rts_*  rnic_admin's pulses (PD with CREATE_QP; IRD
//                 [227:220], MULPDU [211:196] of the QP_RTS parameters)
//   mr_rd_req/gnt/index, mr_rd_valid/entry  the shared MR read port: req
//                 held with the index until gnt; the entry the next clock
//   rreq_*        Read Requests delivered (ddp_rx's queue 1 completions):
//                 conn and the 28-octet body as on the wire
//   post_*        receive buffers to post (ddp_rx's s_post, through the
//                 lead's mux)
//   pay_rd_*      the DMA read client port (what 3, payload read)
//   tx_desc_*, tx_axis_*  rnic_tx's s_desc and s_axis (through the lead's
//                 per-message arbiter): a Read Response (RFC 5040 4.2
//                 opcode 2) to the request's sink STag and TO, len = size,
//                 the QP's MULPDU, msn 0 (tagged: not on the wire)
//   fail_*        a QP's failure (fail_local, layer/etype, code; hdrct,
//                 seglen, ddp_hdr, rdma_hdr: what its Terminate copies,
//                 below at fail_hdrct); rreq_msn the request's MSN
//
// Cycles: A takes a request in 1 clock, the MR read 2 (more while gnt is
// low), the payload read request 1 (more while not ready; and not before
// the same QP's previous read passed its first beat's check, see a_clear),
// the push 1; C needs 1 clock to take a job, 1 for the first beat's check,
// 1 for the descriptor, the payload one beat a clock as fast as rnic_tx
// and the DMA port go, 1 to finish: about 4 clocks between two payloads
// when the next one's first beat is already there. Throughput (tests/rresp
// throughput case: 2 x 2 back-to-back 64 KiB Reads on two QPs, no
// back-pressure, DMA latency 2..12 clocks): rnic_tx's output at 0.999 FPDU
// beats per clock at W=64 (32994 beats in 33025 clocks), 0.998, 0.996 and
// 0.993 at W=128, 256 and 512
// (build/bench/rnic_rresp-W<w>.json).
//
// Not done: the model's window check covers the whole MR (syncRegions
// leaves an MR partly outside every window out of the STag table and
// unmapped refuses any Read through it, before ReadSource's checks); here
// the DMA engine checks the range read, after the MR checks: a Read inside
// the window part of such an MR is served, and a request through an MR
// outside every window that also fails an MR check reports that check
// (fail_local 0) where the model reports Local Catastrophic. A payload
// read with an AXI error after its first beat: the Read Response is
// already on its way and goes out with what was read; the QP fails with
// fail_local 1 after its last beat, no repost (the model's reads do not
// fail; rnic_dma_rd flags err from the failing beat to the last). The
// QP's next request, whose payload read may already be issued by then, is
// dropped and its frame drained (tests/rresp axi_error). The MR fences (an
// MR changed while a request through it is checked or read) are
// rnic_admin's and the lead's. An IRD above 2^POST_DEPTH_LOG2: see
// "Per QP" above.
//
// Parameters: as rnic_dev's (the unused ones accepted for uniform
// instantiation), and POST_DEPTH_LOG2, log2 of ddp_rx's ring per (QP,
// queue).

`resetall
`timescale 1ns / 1ps
`default_nettype none

/* verilator lint_off UNUSEDPARAM */
module rnic_rresp #(
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

    input  wire                  qp_state_wr_valid,
    input  wire [CONN_W-1:0]     qp_state_wr_qpn,
    input  wire [1:0]            qp_state_wr_state,
    input  wire [15:0]           qp_state_wr_pd,
    input  wire                  qp_rts_valid,
    input  wire [CONN_W-1:0]     qp_rts_qpn,
    input  wire [227:0]          qp_rts_params,

    output wire                  mr_rd_req,
    input  wire                  mr_rd_gnt,
    output wire [STAG_AW-1:0]    mr_rd_index,
    input  wire                  mr_rd_valid,
    input  wire [235:0]          mr_rd_entry,

    input  wire                  rreq_valid,
    output wire                  rreq_ready,
    input  wire [CONN_W-1:0]     rreq_conn,
    input  wire [223:0]          rreq_rr,
    input  wire [31:0]           rreq_msn,

    output wire                  post_valid,
    input  wire                  post_ready,
    output wire [CONN_W-1:0]     post_conn,
    output wire [1:0]            post_qn,
    output wire [63:0]           post_addr,
    output wire [31:0]           post_len,
    output wire [63:0]           post_id,

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

    output wire                  fail_valid,
    input  wire                  fail_ready,
    output wire [CONN_W-1:0]     fail_qpn,
    output wire                  fail_local,
    output wire [7:0]            fail_layer_etype,
    output wire [7:0]            fail_code,
    output wire [2:0]            fail_hdrct,
    output wire [15:0]           fail_seglen,
    output wire [143:0]          fail_ddp_hdr,
    output wire [223:0]          fail_rdma_hdr,

    // The receive hold (rnic_dev's network input): bit q is set while a
    // Read Request or Terminate buffer of QP q is still to be posted or
    // is being posted (its QP_RTS's, a served request's repost).
    output wire [(1<<CONN_W)-1:0] rx_hold
);

localparam QPS = 1 << CONN_W;
localparam PW  = POST_DEPTH_LOG2 + 1;
localparam [PW-1:0] POST_MAX = 1 << POST_DEPTH_LOG2;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_rresp: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (CONN_W < 1 || CONN_W > 12 || STAG_AW < 1 || STAG_AW > 16 || POST_DEPTH_LOG2 < 1 || POST_DEPTH_LOG2 > 7) begin
        $error("rnic_rresp: CONN_W 1..12, STAG_AW 1..16, POST_DEPTH_LOG2 1..7; got %0d, %0d, %0d",
               CONN_W, STAG_AW, POST_DEPTH_LOG2);
        $finish;
    end
end

// RFC 5040 4.2 opcode, 7 error codes (layer RDMAP, etype Remote Protection).
localparam [3:0] OP_READ_RESPONSE = 4'd2;
localparam [7:0] LE_PROTECTION = 8'h01;
localparam [7:0] CODE_INVALID_STAG = 8'd0, CODE_BOUNDS = 8'd1, CODE_ACCESS = 8'd2,
                 CODE_NOT_ASSOC = 8'd3, CODE_TO_WRAP = 8'd4;
// rdmap.ReadRequestLen, rdmap.MaxTerminateLen (4 + 2 + 18 + 28).
localparam [31:0] RR_LEN = 32'd28, TERM_LEN = 32'd52;

function automatic [31:0] be32(input [31:0] x);
    be32 = {x[7:0], x[15:8], x[23:16], x[31:24]};
endfunction
function automatic [63:0] be64(input [63:0] x);
    be64 = {be32(x[31:0]), be32(x[63:32])};
endfunction

// ---------------------------------------------------------------------------
// Per-QP state.
reg [15:0]   pd_r   [0:QPS-1];
reg [15:0]   mpdu_r [0:QPS-1];
reg [PW-1:0] np1_r  [0:QPS-1];   // queue 1 buffers to post
reg [QPS-1:0] np2_r;              // the Terminate buffer to post
reg [QPS-1:0] srv_r;              // served (A)
reg [QPS-1:0] dead_r;             // failure reported (C)

// ---------------------------------------------------------------------------
// A: take, MR check, payload read request.
localparam [2:0] A_IDLE = 3'd0, A_MRREQ = 3'd1, A_MRCHK = 3'd2, A_PAYREQ = 3'd3, A_PUSH = 3'd4;
reg [2:0]        a_st;
reg [CONN_W-1:0] a_conn;
reg [31:0]       a_sink_stag, a_size, a_src_stag;
reg [63:0]       a_sink_to, a_src_to;
reg [63:0]       a_addr;
reg              a_fail;
reg [7:0]        a_code;
reg [223:0]      a_rr;       // the request as on the wire, and its MSN: the Terminate's copies
reg [31:0]       a_msn;

// The MR entry: {key, access, pd, bound, base_to, len, addr}.
wire [7:0]  m_key   = mr_rd_entry[235:228];
wire [3:0]  m_acc   = mr_rd_entry[227:224];
wire [15:0] m_pd    = mr_rd_entry[223:208];
wire [15:0] m_bound = mr_rd_entry[207:192];
wire [63:0] m_base  = mr_rd_entry[191:128];
wire [63:0] m_mlen  = mr_rd_entry[127:64];
wire [63:0] m_addr  = mr_rd_entry[63:0];
wire [64:0] m_end   = {1'b0, a_src_to} + {33'd0, a_size};
wire [64:0] m_lim   = {1'b0, m_base} + {1'b0, m_mlen};
wire        m_idx_ok = (a_src_stag[31:8] >> STAG_AW) == 24'd0;
wire        c_inval  = !m_idx_ok || !mr_rd_valid || m_key != a_src_stag[7:0];
wire        c_assoc  = m_pd != pd_r[a_conn] ||
                       (m_bound != 16'hFFFF && m_bound != {{(16-CONN_W){1'b0}}, a_conn});
wire        c_access = !m_acc[2];
wire        c_wrap   = m_end[64];
wire        c_bounds = a_src_to < m_base || m_end > m_lim;
wire [7:0]  c_code   = c_inval ? CODE_INVALID_STAG : c_assoc ? CODE_NOT_ASSOC : c_access ? CODE_ACCESS :
                       c_wrap ? CODE_TO_WRAP : CODE_BOUNDS;
wire        c_fail   = c_inval || c_assoc || c_access || c_wrap || c_bounds;

// The job FIFO (A -> C), 2 entries: {conn, fail, code, sink stag, sink TO, size}.
localparam JW = CONN_W + 1 + 8 + 32 + 64 + 32;
reg [JW-1:0] jq [0:1];
reg          jq_wp, jq_rp;
reg [1:0]    jq_n;
wire         jq_push = a_st == A_PUSH && jq_n != 2'd2;
wire [JW-1:0] j_head = jq[jq_rp];
wire [CONN_W-1:0] j_conn = j_head[JW-1 -: CONN_W];
wire         j_fail = j_head[JW-CONN_W-1];
wire [7:0]   j_code = j_head[JW-CONN_W-2 -: 8];
wire [31:0]  j_sink_stag = j_head[127:96];
wire [63:0]  j_sink_to = j_head[95:32];
wire [31:0]  j_size = j_head[31:0];
wire         j_read = !j_fail && j_size != 32'd0;   // a payload read was issued
// Beside each job: the request's MSN and body, {msn, rr}.
reg [255:0]  jt [0:1];
wire [255:0] jt_head = jt[jq_rp];

assign rreq_ready  = a_st == A_IDLE;
assign mr_rd_req   = a_st == A_MRREQ;
assign mr_rd_index = a_src_stag[STAG_AW+7:8];
assign pay_rd_req_addr  = a_addr;
assign pay_rd_req_len   = a_size;
assign pay_rd_req_what  = 3'd3;

// ---------------------------------------------------------------------------
// C: the jobs in order.
localparam [2:0] C_IDLE = 3'd0, C_FIRST = 3'd1, C_DESC = 3'd2, C_STREAM = 3'd3, C_DONE = 3'd4,
                 C_FAIL = 3'd5, C_DRAIN = 3'd6;
reg [2:0] c_st;
reg       c_local;     // the failure is the device's own (the payload read)
reg       c_report;    // C_DRAIN: report the failure after the frame
reg       c_err;       // an AXI error after the first beat

// A payload read is issued only when no earlier read of the same QP still
// waits for its first beat's check (C_DESC, C_STREAM, C_DONE: checked): a
// refused read fails the QP, and the model reads nothing after it (a read
// issued behind it would be refused too, a DMA_REFUSED the model does not
// raise). Once offered, the request stays (a_go).
reg          a_go;
wire         c_checked = c_st == C_DESC || c_st == C_STREAM || c_st == C_DONE;
wire [CONN_W-1:0] j2_conn = jq[!jq_rp][JW-1 -: CONN_W];
wire         a_clear = jq_n == 2'd0 ||
                       ((j_conn != a_conn || c_checked) && (jq_n == 2'd1 || j2_conn != a_conn));
assign pay_rd_req_valid = a_st == A_PAYREQ && (a_go || (a_clear && !dead_r[a_conn]));
wire      jq_pop = (c_st == C_DONE) || (c_st == C_FAIL && fail_ready) ||
                   (c_st == C_DRAIN && !c_report && pay_rd_valid && pay_rd_last) ||
                   (c_st == C_IDLE && jq_n != 2'd0 && dead_r[j_conn] && !j_read);

assign pay_rd_ready = c_st == C_DRAIN || (c_st == C_STREAM && tx_axis_tready);

assign tx_desc_valid        = c_st == C_DESC;
assign tx_desc_opcode       = OP_READ_RESPONSE;
assign tx_desc_stag         = j_sink_stag;
assign tx_desc_to           = j_sink_to;
assign tx_desc_msn          = 32'd0;
assign tx_desc_inv_stag     = 32'd0;
assign tx_desc_len          = j_size;
assign tx_desc_rr_sink_stag = 32'd0;
assign tx_desc_rr_sink_to   = 64'd0;
assign tx_desc_rr_size      = 32'd0;
assign tx_desc_rr_src_stag  = 32'd0;
assign tx_desc_rr_src_to    = 64'd0;
assign tx_desc_mulpdu       = mpdu_r[j_conn];
assign tx_desc_conn         = j_conn;
assign tx_axis_tvalid = c_st == C_STREAM && pay_rd_valid;
assign tx_axis_tdata  = pay_rd_data;
assign tx_axis_tkeep  = pay_rd_keep;
assign tx_axis_tlast  = pay_rd_last;

assign fail_valid       = c_st == C_FAIL;
assign fail_qpn         = j_conn;
assign fail_local       = c_local;
assign fail_layer_etype = c_local ? 8'h00 : LE_PROTECTION;
assign fail_code        = c_local ? 8'h00 : j_code;
// What the Terminate copies (RFC 5040 4.8), as the model's: for a
// protection error rdmap.ReadSource's (M with the segment length 18 + 28,
// D with the Read Request's DDP header, R with its body), for the refused
// source read readResponse's (D and R). The DDP header (RFC 5041 4.3) is
// rebuilt: control 0x41 (L, DV 1), RDMAP control 0x41 (RV 1, opcode 1),
// RsvdULP 0, QN 1, the request's MSN, MO 0 (ddp_rx delivers a Read
// Request only as one segment at MO 0; reserved bits a peer set are not
// kept: docs/device.md "Not yet").
wire [31:0]  jt_msn = jt_head[255:224];
assign fail_hdrct       = c_local ? 3'b011 : 3'b111;
assign fail_seglen      = c_local ? 16'd0 : 16'd46;
assign fail_ddp_hdr     = {32'd0, jt_msn[7:0], jt_msn[15:8], jt_msn[23:16], jt_msn[31:24], 8'd1, 24'd0, 32'd0,
                           8'h41, 8'h41};
assign fail_rdma_hdr    = jt_head[223:0];

// ---------------------------------------------------------------------------
// P: the posts, one QP a clock, round robin from p_ptr.
reg              p_v;
reg [CONN_W-1:0] p_conn;
reg [1:0]        p_qn;
reg [CONN_W-1:0] p_ptr;
reg              pick_v;
reg [CONN_W-1:0] pick_q;
reg [CONN_W:0]   pj;
always @* begin
    pick_v = 1'b0;
    pick_q = {CONN_W{1'b0}};
    for (pj = 0; pj < QPS; pj = pj + 1) begin
        if (!pick_v && (np2_r[p_ptr + pj[CONN_W-1:0]] || np1_r[p_ptr + pj[CONN_W-1:0]] != {PW{1'b0}})) begin
            pick_v = 1'b1;
            pick_q = p_ptr + pj[CONN_W-1:0];
        end
    end
end
wire p_load = (!p_v || post_ready) && pick_v;
wire p_t    = np2_r[pick_q];     // the Terminate buffer first
assign post_valid = p_v;
assign post_conn  = p_conn;
assign post_qn    = p_qn;
assign post_addr  = {1'b1, 45'd0, p_qn, {(16-CONN_W){1'b0}}, p_conn};
assign post_len   = p_qn == 2'd2 ? TERM_LEN : RR_LEN;
assign post_id    = 64'd0;

// The receive hold: buffers counted and not yet in ddp_rx (ddp_rx takes a
// post before the pieces after it). A repost is counted at C_DONE, before
// rnic_tx sends the Read Response's last octet, so the peer's next Read
// Request, which may follow that octet, finds its buffer.
reg [QPS-1:0] rh_v;
integer       rh_k;
always @* begin
    for (rh_k = 0; rh_k < QPS; rh_k = rh_k + 1) begin
        rh_v[rh_k] = np2_r[rh_k] || np1_r[rh_k] != {PW{1'b0}} || (p_v && p_conn == rh_k[CONN_W-1:0]);
    end
end
assign rx_hold = rh_v;

// The repost of a served job (C_DONE), the post taken (p_load): np1 of
// the same QP may move both ways in one clock.
wire             rep = c_st == C_DONE && !c_err;
wire [PW-1:0]    np1_rts = qp_rts_params[227:220] > {{(8-PW){1'b0}}, POST_MAX} ? POST_MAX
                                                                                  : qp_rts_params[PW+219:220];

/* verilator lint_off UNUSEDSIGNAL */
wire unused = &{1'b0, qp_rts_params[219:212], qp_rts_params[195:0], m_acc[3], m_acc[1:0],
                a_src_stag[31:STAG_AW+8], pay_rd_keep};
/* verilator lint_on UNUSEDSIGNAL */

integer q;
always @(posedge clk) begin
    // --- A ---
    case (a_st)
    A_IDLE: if (rreq_valid) begin
        a_conn      <= rreq_conn;
        a_rr        <= rreq_rr;
        a_msn       <= rreq_msn;
        a_sink_stag <= be32(rreq_rr[31:0]);
        a_sink_to   <= be64(rreq_rr[95:32]);
        a_size      <= be32(rreq_rr[127:96]);
        a_src_stag  <= be32(rreq_rr[159:128]);
        a_src_to    <= be64(rreq_rr[223:160]);
        a_fail      <= 1'b0;
        a_code      <= 8'd0;
        if (!srv_r[rreq_conn]) a_st <= A_IDLE;              // not served: dropped
        else if (rreq_rr[127:96] == 32'd0) a_st <= A_PUSH;  // zero size: no check, no read
        else a_st <= A_MRREQ;
    end
    A_MRREQ: if (mr_rd_gnt) a_st <= A_MRCHK;
    A_MRCHK: begin
        a_addr <= m_addr + (a_src_to - m_base);
        if (c_fail) begin
            a_fail <= 1'b1;
            a_code <= c_code;
            srv_r[a_conn] <= 1'b0;    // nothing more of this QP is taken
            a_st <= A_PUSH;
        end else begin
            a_st <= A_PAYREQ;
        end
    end
    A_PAYREQ: begin
        if (pay_rd_req_valid && pay_rd_req_ready) begin
            a_go <= 1'b0;
            a_st <= A_PUSH;
        end else if (pay_rd_req_valid) begin
            a_go <= 1'b1;
        end else if (dead_r[a_conn]) begin
            a_st <= A_IDLE;       // the QP failed behind its earlier read: dropped
        end
    end
    A_PUSH: if (jq_push) a_st <= A_IDLE;
    default: a_st <= A_IDLE;
    endcase
    if (jq_push) begin
        jq[jq_wp] <= {a_conn, a_fail, a_code, a_sink_stag, a_sink_to, a_size};
        jt[jq_wp] <= {a_msn, a_rr};
        jq_wp <= !jq_wp;
    end
    if (jq_pop) jq_rp <= !jq_rp;
    jq_n <= jq_n + {1'b0, jq_push} - {1'b0, jq_pop};

    // --- C ---
    case (c_st)
    C_IDLE: if (jq_n != 2'd0) begin
        c_local <= 1'b0;
        c_err <= 1'b0;
        c_report <= 1'b0;
        if (dead_r[j_conn]) begin
            // The QP failed behind this job: drop it (its frame too).
            c_st <= j_read ? C_DRAIN : C_IDLE;
        end else if (j_fail) begin
            c_st <= C_FAIL;
        end else if (j_size == 32'd0) begin
            c_st <= C_DESC;
        end else begin
            c_st <= C_FIRST;
        end
    end
    C_FIRST: if (pay_rd_valid) begin
        if (pay_rd_err) begin
            // Refused (or an AXI error on the first beat): nothing sent.
            c_report <= 1'b1;
            c_local <= 1'b1;
            c_st <= C_DRAIN;
        end else begin
            c_st <= C_DESC;
        end
    end
    C_DESC: if (tx_desc_ready) c_st <= j_size == 32'd0 ? C_DONE : C_STREAM;
    C_STREAM: if (pay_rd_valid && tx_axis_tready) begin
        if (pay_rd_err) c_err <= 1'b1;
        if (pay_rd_last) begin
            if (pay_rd_err || c_err) begin
                c_local <= 1'b1;
                c_err <= 1'b1;
                c_st <= C_FAIL;
            end else begin
                c_st <= C_DONE;
            end
        end
    end
    C_DONE: c_st <= C_IDLE;
    C_FAIL: if (fail_ready) begin
        dead_r[j_conn] <= 1'b1;
        srv_r[j_conn] <= 1'b0;
        c_st <= C_IDLE;
    end
    C_DRAIN: if (pay_rd_valid && pay_rd_last) c_st <= c_report ? C_FAIL : C_IDLE;
    default: c_st <= C_IDLE;
    endcase

    // --- P ---
    if (p_load) begin
        p_v <= 1'b1;
        p_conn <= pick_q;
        p_qn <= p_t ? 2'd2 : 2'd1;
        p_ptr <= pick_q + 1'b1;
        if (p_t) np2_r[pick_q] <= 1'b0;
    end else if (post_ready) begin
        p_v <= 1'b0;
    end
    if (p_load && !p_t && rep && pick_q == j_conn) begin
        // taken and given back in the same clock
    end else begin
        if (p_load && !p_t) np1_r[pick_q] <= np1_r[pick_q] - 1'b1;
        if (rep) np1_r[j_conn] <= np1_r[j_conn] + 1'b1;
    end
    if (c_st == C_FAIL && fail_ready) begin
        np1_r[j_conn] <= {PW{1'b0}};
        np2_r[j_conn] <= 1'b0;
    end

    // --- admin pulses (last: they win) ---
    if (qp_state_wr_valid) begin
        srv_r[qp_state_wr_qpn] <= 1'b0;
        np1_r[qp_state_wr_qpn] <= {PW{1'b0}};
        np2_r[qp_state_wr_qpn] <= 1'b0;
        if (qp_state_wr_state == 2'd1) pd_r[qp_state_wr_qpn] <= qp_state_wr_pd;
    end
    if (qp_rts_valid) begin
        srv_r[qp_rts_qpn] <= 1'b1;
        dead_r[qp_rts_qpn] <= 1'b0;
        mpdu_r[qp_rts_qpn] <= qp_rts_params[211:196];
        np1_r[qp_rts_qpn] <= np1_rts;
        np2_r[qp_rts_qpn] <= 1'b1;
    end

    if (rst) begin
        a_st <= A_IDLE;
        a_go <= 1'b0;
        c_st <= C_IDLE;
        jq_wp <= 1'b0;
        jq_rp <= 1'b0;
        jq_n <= 2'd0;
        p_v <= 1'b0;
        p_ptr <= {CONN_W{1'b0}};
        srv_r <= {QPS{1'b0}};
        dead_r <= {QPS{1'b0}};
        np2_r <= {QPS{1'b0}};
        for (q = 0; q < QPS; q = q + 1) begin
            np1_r[q] <= {PW{1'b0}};
        end
    end
end

endmodule

`resetall
