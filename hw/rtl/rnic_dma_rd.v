// rnic_dma_rd: the device's DMA read engine (docs/device.md, "DMA"). It
// serves N_RD read clients (the SQ engine's WQE and payload fetches, later
// the RQ engine and the Read responder): each request is checked against
// the DMA windows, split into AXI4 read bursts, and its octets returned to
// the client lane-0 aligned, in the client's request order.
//
// Ports (flat vectors: client i's signals in slice i):
//   rd_req_*        request, valid/ready: addr [63:0] (any alignment), len
//                   [31:0] (octets, >= 1), what [2:0] (the DMA_REFUSED "what
//                   for" code). Arbitrated round-robin, one request granted
//                   a time; ready may rise only while valid is high.
//   rd_*            response, one frame per request: data lane-0 aligned
//                   (octet 0 of the request in bits [7:0] of the first
//                   beat; rd_data carries the same data in every client's
//                   slice, rd_valid says whose it is), keep all ones but on
//                   the last beat, last, err. A refused request answers one
//                   beat: keep 0, last 1, err 1, nothing read. An AXI error
//                   response (RRESP SLVERR or DECERR) sets err from the
//                   output beat that carries a failing read beat's octets
//                   to the frame's last beat, which always carries it (the
//                   frame keeps its full length). Setting it on every beat
//                   of the frame, the earlier ones included, would need the
//                   whole frame buffered.
//   win_wr_*        the window table, from rnic_admin (a pulse per
//                   DMA_WINDOW that succeeded; len 0 clears the slot). The
//                   engine keeps its own copy (flip-flops, 2^WIN_W slots).
//   ref_*           refusal report: one per refused request (what, addr,
//                   len as requested), toward the event writer.
//   m_axi_ar*, r*   AXI4 read master (cocotbext-axi's names under the
//                   prefix m_axi): INCR bursts of full-width beats (ARSIZE
//                   log2(DATA_W/8)), ARID 0 (ID_W bits; one ID, in-order
//                   return), ARCACHE 0011, ARPROT 010, ARLOCK 0; a burst
//                   never crosses a 4 KiB boundary (AXI4 A3.4.1) and has at
//                   most 256 beats. RID is not looked at.
//
// The window check: [addr, addr + len) is allowed iff it lies inside one
// non-empty window [a, a + l) (driver/model/mem.go, inWindow; an access
// whose end passes 2^64 is refused). A refused request is not issued.
//
// Order: requests pass one at a time through the grant, the end address
// (addr + len, registered), the window check, and the dispatch into the
// order queue (2^OUT_LOG2 requests, and its head in registers); an allowed
// request is then split into bursts, one AR every two clocks (a burst's
// size, then its AR), while the next request is checked. Responses come
// back in AR order and leave in queue order, so each client gets its
// frames in its request order (and a client holding rd_ready low holds
// every other client's data behind it: one queue, head of line).
//
// Cycles and throughput: a request takes 5 clocks from its grant to its
// first AR (grant, end, check, dispatch, burst size); a new request is
// granted every 4 clocks at most, and none is dispatched while an earlier
// one still issues bursts. The response side passes one beat a clock
// (lane-0 aligned requests straight from R; an unaligned request's first
// read beat is held one clock, so each unaligned request costs one clock
// more): long requests run at one beat per clock against a memory that
// answers every clock (tests/dma measures it).
//
// Limits: DATA_W 64..512; N_RD 1..16; len >= 1 (len 0 is outside the
// contract); 2^OUT_LOG2 + 1 requests between dispatch and their last
// beat, which bounds the requests (not the bursts) in flight.
//
// Verification: tests/dma (cocotb, Verilator): random requests from every
// client at once against cocotbext-axi's AxiRam with random back-pressure
// on every port, every octet checked; window refusals; an AXI error
// response; the protocol checkers on every port.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_dma_rd #(
    parameter DATA_W   = 64,
    parameter N_RD     = 2,
    parameter WIN_W    = 4,
    parameter ID_W     = 1,
    parameter OUT_LOG2 = 3
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [N_RD-1:0]         rd_req_valid,
    output wire [N_RD-1:0]         rd_req_ready,
    input  wire [N_RD*64-1:0]      rd_req_addr,
    input  wire [N_RD*32-1:0]      rd_req_len,
    input  wire [N_RD*3-1:0]       rd_req_what,

    output wire [N_RD-1:0]         rd_valid,
    input  wire [N_RD-1:0]         rd_ready,
    output wire [N_RD*DATA_W-1:0]  rd_data,
    output wire [N_RD*DATA_W/8-1:0] rd_keep,
    output wire [N_RD-1:0]         rd_last,
    output wire [N_RD-1:0]         rd_err,

    input  wire                    win_wr_valid,
    input  wire [WIN_W-1:0]        win_wr_slot,
    input  wire [63:0]             win_wr_addr,
    input  wire [63:0]             win_wr_len,

    output wire                    ref_valid,
    input  wire                    ref_ready,
    output wire [2:0]              ref_what,
    output wire [63:0]             ref_addr,
    output wire [31:0]             ref_len,

    output wire [ID_W-1:0]         m_axi_arid,
    output wire [63:0]             m_axi_araddr,
    output wire [7:0]              m_axi_arlen,
    output wire [2:0]              m_axi_arsize,
    output wire [1:0]              m_axi_arburst,
    output wire                    m_axi_arlock,
    output wire [3:0]              m_axi_arcache,
    output wire [2:0]              m_axi_arprot,
    output wire                    m_axi_arvalid,
    input  wire                    m_axi_arready,
    input  wire [ID_W-1:0]         m_axi_rid,
    input  wire [DATA_W-1:0]       m_axi_rdata,
    input  wire [1:0]              m_axi_rresp,
    input  wire                    m_axi_rlast,
    input  wire                    m_axi_rvalid,
    output wire                    m_axi_rready
);
initial begin
    if ((DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) || N_RD < 1 || N_RD > 16 ||
        WIN_W < 1 || WIN_W > 8 || ID_W < 1 || OUT_LOG2 < 1 || OUT_LOG2 > 6) begin
        $error("rnic_dma_rd: DATA_W 64/128/256/512, N_RD 1..16, WIN_W 1..8, ID_W >= 1, OUT_LOG2 1..6; got %0d, %0d, %0d, %0d, %0d",
               DATA_W, N_RD, WIN_W, ID_W, OUT_LOG2);
        $finish;
    end
end

localparam BYTES = DATA_W / 8;
localparam LGB = $clog2(BYTES);
localparam CL_W = N_RD > 1 ? $clog2(N_RD) : 1;
localparam WINDOWS = 1 << WIN_W;
localparam DEPTH = 1 << OUT_LOG2;
localparam [12:0] PAGE_BEATS = 13'd4096 >> LGB;
localparam [32:0] BM1 = BYTES - 1;
// An order-queue entry: {client, refused, offset, tail, read beats, output beats}.
localparam QE_W = CL_W + 1 + LGB + LGB + 33 + 33;

// --- the window table ------------------------------------------------------------
reg [63:0] win_a [0:WINDOWS-1];
reg [63:0] win_e [0:WINDOWS-1];   // a + l: no carry (DMA_WINDOW refuses one)
reg [WINDOWS-1:0] win_nz;
always @(posedge clk) begin
    if (win_wr_valid) begin
        win_a[win_wr_slot] <= win_wr_addr;
        win_e[win_wr_slot] <= win_wr_addr + win_wr_len;
        win_nz[win_wr_slot] <= win_wr_len != 64'd0;
    end
    if (rst) win_nz <= {WINDOWS{1'b0}};
end

// --- the request side: grant, end, check, dispatch --------------------------------
localparam [1:0] S_IDLE = 2'd0, S_END = 2'd1, S_CHK = 2'd2, S_DISP = 2'd3;
reg [1:0]       st;
reg [CL_W-1:0]  rr;                 // the round-robin pointer: the first client looked at
reg [CL_W-1:0]  q_cl;
reg [63:0]      q_addr;
reg [31:0]      q_len;
reg [2:0]       q_what;
reg [64:0]      q_end;
reg             q_ok;

// Round-robin: the lowest valid client at or after rr, else the lowest.
reg [CL_W-1:0]  gnt;
reg             gnt_any;
integer k;
always @* begin
    gnt = {CL_W{1'b0}};
    gnt_any = 1'b0;
    for (k = N_RD - 1; k >= 0; k = k - 1)
        if (rd_req_valid[k]) begin
            gnt = k[CL_W-1:0];
            gnt_any = 1'b1;
        end
    for (k = N_RD - 1; k >= 0; k = k - 1)
        if (rd_req_valid[k] && k[CL_W:0] >= {1'b0, rr}) gnt = k[CL_W-1:0];
end
wire take_req = st == S_IDLE && gnt_any;
genvar gi;
generate for (gi = 0; gi < N_RD; gi = gi + 1) begin : g_rdy
    localparam [CL_W-1:0] ME = gi;
    assign rd_req_ready[gi] = take_req && gnt == ME;
end endgenerate

// The window check of q_addr .. q_end.
reg hit;
integer wi;
always @* begin
    hit = 1'b0;
    for (wi = 0; wi < WINDOWS; wi = wi + 1)
        if (win_nz[wi] && q_addr >= win_a[wi] && q_end <= {1'b0, win_e[wi]}) hit = 1'b1;
end

// The order queue.
reg [QE_W-1:0]  qe [0:DEPTH-1];
reg [OUT_LOG2:0] qw, qr;
wire q_full  = (qw ^ qr) == {1'b1, {OUT_LOG2{1'b0}}};
wire q_empty = qw == qr;

// The burst splitter.
reg             sp_act;
reg [8:0]       sp_nr;             // the next burst's beats, computed the clock before
reg             sp_nv, sp_lastr;   // sp_nr valid; it is the request's last burst
reg [63:0]      sp_addr;
reg [32:0]      sp_beats;
reg             ar_v;
reg [63:0]      ar_addr;
reg [7:0]       ar_len;

reg             ref_v;
reg [2:0]       ref_w;
reg [63:0]      ref_a;
reg [31:0]      ref_l;

wire [LGB-1:0]  q_off = q_addr[LGB-1:0];
wire [32:0]     q_in_beats  = ({1'b0, q_len} + {{(33 - LGB){1'b0}}, q_off} + BM1) >> LGB;
wire [32:0]     q_out_beats = ({1'b0, q_len} + BM1) >> LGB;
wire disp_ok = st == S_DISP && !q_full && !sp_act && (q_ok || !ref_v);

always @(posedge clk) begin
    case (st)
    S_IDLE: if (gnt_any) begin
        q_cl <= gnt;
        q_addr <= rd_req_addr[gnt * 64 +: 64];
        q_len <= rd_req_len[gnt * 32 +: 32];
        q_what <= rd_req_what[gnt * 3 +: 3];
        rr <= ({{(32 - CL_W){1'b0}}, gnt} == N_RD - 1) ? {CL_W{1'b0}} : gnt + 1'b1;
        st <= S_END;
    end
    S_END: begin
        q_end <= {1'b0, q_addr} + {33'd0, q_len};
        st <= S_CHK;
    end
    S_CHK: begin
        q_ok <= hit;
        st <= S_DISP;
    end
    default: if (disp_ok) begin
        qe[qw[OUT_LOG2-1:0]] <= {q_cl, !q_ok, q_off, q_len[LGB-1:0], q_ok ? q_in_beats : 33'd0,
                                  q_out_beats};
        qw <= qw + 1'b1;
        if (q_ok) begin
            sp_act <= 1'b1;
            sp_nv <= 1'b0;
            sp_addr <= {q_addr[63:LGB], {LGB{1'b0}}};
            sp_beats <= q_in_beats;
        end else begin
            ref_v <= 1'b1;
            ref_w <= q_what;
            ref_a <= q_addr;
            ref_l <= q_len;
        end
        st <= S_IDLE;
    end
    endcase
    if (ref_v && ref_ready) ref_v <= 1'b0;

    // Bursts: up to the 4 KiB boundary, at most 256 beats.
    if (ar_v && m_axi_arready) ar_v <= 1'b0;
    // (Two clocks a burst: its size, then its AR. The loop through the
    // address and the size's minimum is cut in two.)
    if (sp_act && !sp_nv) begin
        sp_nr <= sp_n;
        sp_lastr <= sp_beats == {24'd0, sp_n};
        sp_nv <= 1'b1;
    end
    if (sp_act && sp_nv && (!ar_v || m_axi_arready)) begin
        ar_v <= 1'b1;
        ar_addr <= sp_addr;
        ar_len <= sp_nr[7:0] - 1'b1;
        sp_addr <= sp_addr + ({55'd0, sp_nr} << LGB);
        sp_beats <= sp_beats - {24'd0, sp_nr};
        sp_nv <= 1'b0;
        if (sp_lastr) sp_act <= 1'b0;
    end

    if (rst) begin
        st <= S_IDLE;
        rr <= {CL_W{1'b0}};
        qw <= {(OUT_LOG2 + 1){1'b0}};
        sp_act <= 1'b0;
        ar_v <= 1'b0;
        ref_v <= 1'b0;
    end
end

// The burst's beats: min(beats left, to the 4 KiB boundary, 256).
wire [12:0] sp_to4k = PAGE_BEATS - {{(LGB + 1){1'b0}}, sp_addr[11:LGB]};
reg  [8:0]  sp_n;
always @* begin
    sp_n = 9'd256;
    if (sp_to4k < 13'd256) sp_n = sp_to4k[8:0];
    if (sp_beats < {24'd0, sp_n}) sp_n = sp_beats[8:0];
end

assign m_axi_arid = {ID_W{1'b0}};
assign m_axi_araddr = ar_addr;
assign m_axi_arlen = ar_len;
assign m_axi_arsize = LGB[2:0];
assign m_axi_arburst = 2'b01;
assign m_axi_arlock = 1'b0;
assign m_axi_arcache = 4'b0011;
assign m_axi_arprot = 3'b010;
assign m_axi_arvalid = ar_v;

assign ref_valid = ref_v;
assign ref_what = ref_w;
assign ref_addr = ref_a;
assign ref_len = ref_l;

// --- the response side: the queue's head request, in registers -----------------
// (loaded from the queue in the clock the previous head's last beat goes,
// so that the realignment's shift and the beat counts start from flops)
wire [QE_W-1:0] qh = qe[qr[OUT_LOG2-1:0]];

reg               h_v, h_ref;
reg  [CL_W-1:0]   h_cl;
reg  [LGB-1:0]    h_off, h_tail;
reg  [32:0]       in_rem, out_rem;   // read beats to take, output beats to give
reg               in_left, out_one;  // in_rem != 0, out_rem == 1 (kept beside them, for timing)
reg               aligned;
reg  [DATA_W-1:0] prev;
reg               prev_v, prev_err, err_st;

wire need_prev = !aligned;
wire need_cur  = aligned || in_left;
wire cur_ok    = m_axi_rvalid && in_left;
wire o_last    = h_ref || out_one;
wire o_valid   = h_v && (h_ref || ((!need_prev || prev_v) && (!need_cur || cur_ok)));
wire o_fire    = o_valid && rd_ready[h_cl];
wire r_take    = h_v && !h_ref && cur_ok && (aligned ? o_fire : (!prev_v || o_fire));
wire cur_err   = m_axi_rresp[1];
wire o_err     = h_ref || err_st || (need_prev && prev_err) || (need_cur && cur_err);
wire h_pop     = o_fire && o_last;
wire h_load    = (!h_v || h_pop) && !q_empty;

wire [2*DATA_W-1:0] both = {need_cur ? m_axi_rdata : {DATA_W{1'b0}}, prev};
/* verilator lint_off UNUSEDSIGNAL */
wire [2*DATA_W-1:0] shifted = both >> {h_off, 3'b000};   // its low half
/* verilator lint_on UNUSEDSIGNAL */
wire [DATA_W-1:0]   o_data = h_ref ? {DATA_W{1'b0}} : aligned ? m_axi_rdata : shifted[DATA_W-1:0];
wire [BYTES-1:0]    tail_keep = h_tail == {LGB{1'b0}} ? {BYTES{1'b1}}
                                : ~({BYTES{1'b1}} << h_tail);
wire [BYTES-1:0]    o_keep = h_ref ? {BYTES{1'b0}} : o_last ? tail_keep : {BYTES{1'b1}};

always @(posedge clk) begin
    if (r_take) begin
        in_rem <= in_rem - 1'b1;
        in_left <= in_rem != 33'd1;
        prev <= m_axi_rdata;
        prev_err <= cur_err;
        prev_v <= 1'b1;
    end else if (o_fire) begin
        prev_v <= 1'b0;
    end
    if (o_fire) begin
        out_rem <= out_rem - 1'b1;
        out_one <= out_rem == 33'd2;
        err_st <= o_err;
    end
    if (h_pop) begin
        h_v <= 1'b0;
        prev_v <= 1'b0;
        err_st <= 1'b0;
    end
    if (h_load) begin
        h_v <= 1'b1;
        {h_cl, h_ref, h_off, h_tail, in_rem, out_rem} <= qh;
        aligned <= qh[66 + LGB +: LGB] == {LGB{1'b0}};
        in_left <= qh[33 +: 33] != 33'd0;
        out_one <= qh[0 +: 33] == 33'd1;
        qr <= qr + 1'b1;
    end
    if (rst) begin
        qr <= {(OUT_LOG2 + 1){1'b0}};
        h_v <= 1'b0;
        prev_v <= 1'b0;
        err_st <= 1'b0;
    end
end

assign m_axi_rready = r_take;
// RID (one ID) and RLAST (the engine counts each request's beats) are not
// looked at.
/* verilator lint_off UNUSEDSIGNAL */
wire unused_r = &{1'b0, m_axi_rid, m_axi_rlast, m_axi_rresp[0]};
/* verilator lint_on UNUSEDSIGNAL */

generate for (gi = 0; gi < N_RD; gi = gi + 1) begin : g_out
    localparam [CL_W-1:0] ME = gi;
    assign rd_valid[gi] = o_valid && h_cl == ME;
    assign rd_data[gi * DATA_W +: DATA_W] = o_data;
    assign rd_keep[gi * BYTES +: BYTES] = o_keep;
    assign rd_last[gi] = o_last;
    assign rd_err[gi] = o_err;
end endgenerate

endmodule

`resetall
