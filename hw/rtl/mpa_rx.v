// mpa_rx: the MPA receiver (RFC 5044 Full Operation, in-order case) for
// many connections, DATA_W bits per clock. TCP segment payloads in; the
// ULPDUs (DDP segments) found in them out, cut through, markers, ULPDU
// length, pad and CRC removed; a verdict for every FPDU once its CRC field
// has been checked; every segment it does not take in order out on the
// exception stream, whole, with a reason.
//
//   s_axis -> mpa_rx_align -> skid -> mpa_rx_walk -+-> mpa_rx_lane 0 -+-> merge -> m_axis, m_verdict
//                  |                               +-> mpa_rx_lane 1 -+
//                  +-> m_exc
//
// See the blocks for the details; hw/README.md for the interface to DDP
// placement. Octet for octet, the pieces of each ULPDU, joined, are the
// ULPDUs iwarp/mpa's Receiver delivers for the same stream, and the verdicts
// its errors (MPA error 2 for a CRC, 3 for a marker or ULPDU_Length).
//
// Configuration, cfg_*: starts connection cfg_conn at sequence number
// cfg_base (the first octet of Full Operation: its first FPDU, or the
// marker in front of it; markers are every 512 octets from there), with
// markers and CRCs on or off as negotiated (RFC 5044 7.1), and clears its
// error. cfg_en = 0 stops it (its segments go to the exception stream).
// Accepted between segments only; configure a connection while none of its
// segments is in the block.
//
// fail_*: marks connection fail_conn in error, as a non-zero verdict does:
// its segments classified from then on go to the exception stream with
// reason 2 (in error) until it is configured again. The device sends it
// when the QP fails for any other reason (the model's segIn: a QP in the
// error state hands the peer's segments to the exception ring, reason
// "in error"). Taken into a one-entry holding register (fail_ready low
// while it is full); it goes into the error table on the first clock no
// verdict writes it, so a cfg_* sent after the mark's transfer lands after
// it (cfg_ready is low while the table is being written).
//
// Input s_axis: one frame per TCP segment with payload, lane-0 aligned,
// every beat full but the last, ceil(len/N) beats; tkeep is not looked at.
// tuser = {conn, seq[31:0], len[15:0]}, read on the first beat.
//
// Output m_axis: ULPDU pieces, tuser = {ulpdu_len[15:0], conn, first,
// last}: first (same on every beat) = the piece starts with the ULPDU's
// first octet, and then ulpdu_len is its ULPDU_Length (0 on other pieces);
// last (on the tlast beat) = it ends the ULPDU. A piece with no octets, or the last beat
// of a piece whose octets ended on a beat boundary, has tkeep all zero.
// m_verdict: tdata = code[2:0] (0 good, 2 CRC, 3 marker or ULPDU_Length),
// tuser = conn, one per FPDU, in FPDU order, each after its ULPDU's last
// piece. After a non-zero verdict the connection's segments go to the
// exception stream; pieces and verdicts of its later FPDUs already inside
// may still come out and are to be discarded.
// m_exc: the segments not taken, tuser = {conn, seq, len, reason[2:0]}
// (see mpa_rx_align: 1 not enabled, 2 in error, 3 out of order, 4
// duplicate, 5 empty).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mpa_rx #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
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

    input  wire                    fail_valid,
    output wire                    fail_ready,
    input  wire [CONN_W-1:0]       fail_conn,

    input  wire [DATA_W-1:0]       s_axis_tdata,
    input  wire [DATA_W/8-1:0]     s_axis_tkeep,
    input  wire                    s_axis_tvalid,
    output wire                    s_axis_tready,
    input  wire                    s_axis_tlast,
    input  wire [CONN_W+47:0]      s_axis_tuser,

    output wire [DATA_W-1:0]       m_axis_tdata,
    output wire [DATA_W/8-1:0]     m_axis_tkeep,
    output wire                    m_axis_tvalid,
    input  wire                    m_axis_tready,
    output wire                    m_axis_tlast,
    output wire [CONN_W+17:0]      m_axis_tuser,

    output wire [2:0]              m_verdict_tdata,
    output wire                    m_verdict_tvalid,
    input  wire                    m_verdict_tready,
    output wire [CONN_W-1:0]       m_verdict_tuser,

    output wire [DATA_W-1:0]       m_exc_tdata,
    output wire [DATA_W/8-1:0]     m_exc_tkeep,
    output wire                    m_exc_tvalid,
    input  wire                    m_exc_tready,
    output wire                    m_exc_tlast,
    output wire [CONN_W+50:0]      m_exc_tuser
);

localparam N = DATA_W / 8;
localparam WL = $clog2(DATA_W / 32) + 1;
localparam OL = $clog2(N) + 1;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("mpa_rx: DATA_W must be 64, 128, 256 or 512, not %0d", DATA_W);
        $finish;
    end
end

// ---- configuration goes to both tables at once -------------------------------------

wire a_cfg_ready, w_cfg_ready;
assign cfg_ready = a_cfg_ready && w_cfg_ready;
wire cfg_go = cfg_valid && cfg_ready;

reg              err_set_reg;
reg [CONN_W-1:0] err_conn_reg;
// fail_*'s holding register: written into the error table when no verdict is
reg              fail_hold_reg;
reg [CONN_W-1:0] fail_conn_reg;
assign fail_ready = !fail_hold_reg;
wire             err_wr = err_set_reg || fail_hold_reg;
wire [CONN_W-1:0] err_wr_conn = err_set_reg ? err_conn_reg : fail_conn_reg;
always @(posedge clk) begin
    if (fail_valid && !fail_hold_reg) begin
        fail_hold_reg <= 1'b1;
        fail_conn_reg <= fail_conn;
    end else if (!err_set_reg) begin
        fail_hold_reg <= 1'b0;
    end
    if (rst) begin
        fail_hold_reg <= 1'b0;
    end
end

// ---- intake ------------------------------------------------------------------------------

wire [DATA_W-1:0] a_data;
wire a_valid, a_ready, a_first, a_last, a_mk, a_mrk_en, a_crc_en, a_hint, a_cont;
wire [CONN_W-1:0] a_hint_conn;
wire [CONN_W-1:0] a_conn;
wire [WL-1:0] a_wlo, a_whi;

mpa_rx_align #(.DATA_W(DATA_W), .CONN_W(CONN_W)) align (
    .clk(clk), .rst(rst),
    .cfg_valid(cfg_go), .cfg_ready(a_cfg_ready), .cfg_conn(cfg_conn), .cfg_en(cfg_en),
    .cfg_mrk_en(cfg_mrk_en), .cfg_crc_en(cfg_crc_en), .cfg_base(cfg_base),
    .err_valid(err_wr), .err_conn(err_wr_conn),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tready(s_axis_tready), .s_axis_tlast(s_axis_tlast), .s_axis_tuser(s_axis_tuser),
    .m_data(a_data), .m_valid(a_valid), .m_ready(a_ready), .m_conn(a_conn),
    .m_first(a_first), .m_cont(a_cont), .m_last(a_last), .m_wlo(a_wlo), .m_whi(a_whi), .m_mk(a_mk),
    .m_mrk_en(a_mrk_en), .m_crc_en(a_crc_en), .m_hint(a_hint), .m_hint_conn(a_hint_conn),
    .m_exc_tdata(m_exc_tdata), .m_exc_tkeep(m_exc_tkeep), .m_exc_tvalid(m_exc_tvalid),
    .m_exc_tready(m_exc_tready), .m_exc_tlast(m_exc_tlast), .m_exc_tuser(m_exc_tuser)
);

// ---- between the intake and the walker: a one-beat skid buffer ---------------------
// The walker's ready depends on its pass (whether the beat's last FPDU has
// been walked), too deep to drive mpa_rx_align's pipeline in the same
// clock. The intake sees a register instead (k_valid low): a beat it
// hands on goes straight through to the walker, no clock added, and waits
// in k_* when the walker does not take it; while one waits there, the
// intake holds its next one.
reg                k_valid;
reg [DATA_W-1:0]   k_data;
reg [CONN_W-1:0]   k_conn;
reg                k_first, k_cont, k_last, k_mk, k_crc_en;
reg [WL-1:0]       k_wlo, k_whi;
wire [DATA_W-1:0]  b_data = k_valid ? k_data : a_data;
wire [CONN_W-1:0]  b_conn = k_valid ? k_conn : a_conn;
wire               b_valid = k_valid || a_valid;
wire               b_first = k_valid ? k_first : a_first;
wire               b_cont = k_valid ? k_cont : a_cont;
wire               b_last = k_valid ? k_last : a_last;
wire               b_mk = k_valid ? k_mk : a_mk && a_mrk_en;
wire               b_crc_en = k_valid ? k_crc_en : a_crc_en;
wire [WL-1:0]      b_wlo = k_valid ? k_wlo : a_wlo;
wire [WL-1:0]      b_whi = k_valid ? k_whi : a_whi;
wire               b_ready;
assign a_ready = !k_valid;
always @(posedge clk) begin
    if (!k_valid) begin
        {k_data, k_conn, k_first, k_cont, k_last, k_mk, k_crc_en, k_wlo, k_whi} <=
            {a_data, a_conn, a_first, a_cont, a_last, a_mk && a_mrk_en, a_crc_en, a_wlo, a_whi};
    end
    k_valid <= b_valid && !b_ready;
    if (rst) begin
        k_valid <= 1'b0;
    end
end

// ---- delineation ----------------------------------------------------------------------

wire [1:0] l_valid, l_ready;
wire [2*DATA_W-1:0] l_data;
wire [2*WL-1:0] l_crc_lo, l_crc_hi;
wire [2*WL-3:0] l_crcw;
wire [2*OL-1:0] l_ulp_lo, l_ulp_hi;
wire [1:0] l_run_first, l_run_last, l_resume, l_nopiece, l_fpdu_first, l_fpdu_end, l_crc_en, l_mkbad, l_lenbad;
wire [63:0] l_state;
wire [2*CONN_W-1:0] l_conn;
wire [31:0] l_ulen;
wire [15:0] l_vseq;
wire [1:0] wb_valid;
wire [2*CONN_W-1:0] wb_conn;
wire [63:0] wb_state;

// The lanes' saved CRCs (wb_*) share the walker's one port through a
// two-entry queue, one a clock, from registers. The walker has at most two
// cut runs' CRCs on their way back (mpa_rx_walk's pend_v), so both lanes
// may return one in the same clock, and the queue never holds a third.
reg              wq0_v, wq1_v;
reg [CONN_W-1:0] wq0_conn, wq1_conn;
reg [31:0]       wq0_state, wq1_state;
wire             wb_any = wb_valid[0] || wb_valid[1];
wire [CONN_W-1:0] wb_first_conn = wb_valid[0] ? wb_conn[0 +: CONN_W] : wb_conn[CONN_W +: CONN_W];
wire [31:0]      wb_first_state = wb_valid[0] ? wb_state[31:0] : wb_state[63:32];
always @(posedge clk) begin
    // The head goes to the walker every clock; what is behind it moves up
    // and the lanes' new ones go in behind that.
    if (wq1_v) begin
        {wq0_v, wq0_conn, wq0_state} <= {1'b1, wq1_conn, wq1_state};
        {wq1_v, wq1_conn, wq1_state} <= {wb_any, wb_first_conn, wb_first_state};
    end else begin
        {wq0_v, wq0_conn, wq0_state} <= {wb_any, wb_first_conn, wb_first_state};
        {wq1_v, wq1_conn, wq1_state} <= {wb_valid[0] && wb_valid[1], wb_conn[CONN_W +: CONN_W], wb_state[63:32]};
    end
    if (rst) begin
        wq0_v <= 1'b0;
        wq1_v <= 1'b0;
    end
end

mpa_rx_walk #(.DATA_W(DATA_W), .CONN_W(CONN_W)) walk (
    .clk(clk), .rst(rst),
    .cfg_valid(cfg_go), .cfg_ready(w_cfg_ready), .cfg_conn(cfg_conn),
    .s_data(b_data), .s_valid(b_valid), .s_ready(b_ready), .s_conn(b_conn),
    .s_first(b_first), .s_cont(b_cont), .s_last(b_last), .s_wlo(b_wlo), .s_whi(b_whi), .s_mk(b_mk),
    .s_crc_en(b_crc_en), .s_hint(a_hint), .s_hint_conn(a_hint_conn),
    .wb_valid(wq0_v), .wb_conn(wq0_conn), .wb_state(wq0_state),
    .l_valid(l_valid), .l_ready(l_ready), .l_data(l_data),
    .l_crc_lo(l_crc_lo), .l_crc_hi(l_crc_hi), .l_crcw(l_crcw),
    .l_ulp_lo(l_ulp_lo), .l_ulp_hi(l_ulp_hi),
    .l_run_first(l_run_first), .l_run_last(l_run_last), .l_resume(l_resume), .l_nopiece(l_nopiece), .l_state(l_state),
    .l_fpdu_first(l_fpdu_first), .l_fpdu_end(l_fpdu_end), .l_conn(l_conn), .l_ulen(l_ulen),
    .l_crc_en(l_crc_en), .l_mkbad(l_mkbad), .l_lenbad(l_lenbad), .l_vseq(l_vseq)
);

// ---- two lanes ------------------------------------------------------------------------

wire [2*DATA_W-1:0] p_tdata;
wire [2*N-1:0] p_tkeep;
wire [1:0] p_tvalid, p_tready, p_tlast, p_first, p_last;
wire [2*CONN_W-1:0] p_conn;
wire [31:0] p_ulen;
wire [1:0] v_valid, v_ready;
wire [2*CONN_W-1:0] v_conn;
wire [5:0] v_code;
wire [15:0] v_vseq;

genvar g;
generate
    for (g = 0; g < 2; g = g + 1) begin : lane
        mpa_rx_lane #(.DATA_W(DATA_W), .CONN_W(CONN_W)) u (
            .clk(clk), .rst(rst),
            .s_valid(l_valid[g]), .s_ready(l_ready[g]), .s_data(l_data[DATA_W*g +: DATA_W]),
            .s_crc_lo(l_crc_lo[WL*g +: WL]), .s_crc_hi(l_crc_hi[WL*g +: WL]),
            .s_crcw(l_crcw[(WL-1)*g +: WL-1]),
            .s_ulp_lo(l_ulp_lo[OL*g +: OL]), .s_ulp_hi(l_ulp_hi[OL*g +: OL]),
            .s_run_first(l_run_first[g]), .s_run_last(l_run_last[g]), .s_resume(l_resume[g]),
            .s_nopiece(l_nopiece[g]),
            .s_state(l_state[32*g +: 32]), .s_fpdu_first(l_fpdu_first[g]),
            .s_fpdu_end(l_fpdu_end[g]), .s_conn(l_conn[CONN_W*g +: CONN_W]),
            .s_ulen(l_ulen[16*g +: 16]),
            .s_crc_en(l_crc_en[g]), .s_mkbad(l_mkbad[g]), .s_lenbad(l_lenbad[g]),
            .s_vseq(l_vseq[8*g +: 8]),
            .m_tdata(p_tdata[DATA_W*g +: DATA_W]), .m_tkeep(p_tkeep[N*g +: N]),
            .m_tvalid(p_tvalid[g]), .m_tready(p_tready[g]), .m_tlast(p_tlast[g]),
            .m_conn(p_conn[CONN_W*g +: CONN_W]), .m_ulen(p_ulen[16*g +: 16]),
            .m_first(p_first[g]), .m_last(p_last[g]),
            .v_valid(v_valid[g]), .v_ready(v_ready[g]), .v_conn(v_conn[CONN_W*g +: CONN_W]),
            .v_code(v_code[3*g +: 3]), .v_vseq(v_vseq[8*g +: 8]),
            .wb_valid(wb_valid[g]), .wb_conn(wb_conn[CONN_W*g +: CONN_W]),
            .wb_state(wb_state[32*g +: 32])
        );
    end
endgenerate

// ---- merge: pieces in run order, verdicts in FPDU order ----------------------------------

// The lane of each run that makes a piece, in run order (ord_*): pushed as
// the walker hands the run's first beat to its lane (a step loads both
// lanes' l_* at once, run A's before run B's: B's is an FPDU's first run,
// A's never is), popped as the piece's last beat goes out. The pick of
// the lane whose piece goes out is then a register (the queue's head),
// not a comparison of run numbers carried through the lanes.
// (Runs pushed and not yet out: at most the six places a run can be in a
// lane, l_* to its output queue, per lane, plus the one whose push is due:
// the queue's 32 are never full.)
reg  [1:0] l_held_reg;     // l_* of a lane were there the clock before, not taken
wire [1:0] l_new = l_valid & ~l_held_reg & l_run_first & ~l_nopiece;
wire       ord_two = l_new == 2'b11;
wire       ord_in_valid = l_new != 2'b00;
wire       ord_in_lane = ord_two ? !l_fpdu_first[1] : l_new[1];
wire       ord_lane;
wire       ord_valid;
wire       ord_pop;
wire [1:0] ord_ready_unused;
ddp_rx_fifo #(.WIDTH(1), .AW(5)) ord_fifo (
    .clk(clk), .rst(rst),
    .in_data(ord_in_lane), .in_valid(ord_in_valid), .in_ready(ord_ready_unused[0]),
    .in_data2(!ord_in_lane), .in_valid2(ord_two), .in_ready2(ord_ready_unused[1]),
    .out_data(ord_lane), .out_valid(ord_valid), .out_ready(ord_pop)
);
always @(posedge clk) begin
    l_held_reg <= l_valid & ~l_ready;
    if (rst) begin
        l_held_reg <= 2'b00;
    end
end

reg [7:0] vexp_reg;      // FPDU-end number of the next verdict
reg [7:0] vdone_reg;     // FPDU ends whose last piece has gone out

wire sel = ord_lane;

assign m_axis_tdata = p_tdata[DATA_W*sel +: DATA_W];
assign m_axis_tkeep = p_tkeep[N*sel +: N];
assign m_axis_tlast = p_tlast[sel];
assign m_axis_tuser = {p_ulen[16*sel +: 16], p_conn[CONN_W*sel +: CONN_W], p_first[sel], p_last[sel]};
assign m_axis_tvalid = ord_valid && p_tvalid[sel];
assign p_tready[0] = ord_valid && !sel && m_axis_tready;
assign p_tready[1] = ord_valid && sel && m_axis_tready;
wire piece_go = m_axis_tvalid && m_axis_tready;
assign ord_pop = piece_go && m_axis_tlast;
wire unused_ord = &{1'b0, ord_ready_unused};

// A verdict goes out once its FPDU's last piece has: vexp_reg never passes
// vdone_reg, and the two are at most the lanes' runs in flight apart (2 x
// 16, mpa_rx_lane's info queue), so "some FPDU ahead of it is done" is
// vdone_reg != vexp_reg (an equality, not a difference's sign).
wire vok = vdone_reg != vexp_reg;
wire vh0 = v_valid[0] && v_vseq[7:0] == vexp_reg;
wire vsel = !vh0;
assign m_verdict_tvalid = vok && (vh0 || (v_valid[1] && v_vseq[15:8] == vexp_reg));
assign m_verdict_tdata = v_code[3*vsel +: 3];
assign m_verdict_tuser = v_conn[CONN_W*vsel +: CONN_W];
assign v_ready[0] = m_verdict_tvalid && !vsel && m_verdict_tready;
assign v_ready[1] = m_verdict_tvalid && vsel && m_verdict_tready;
wire verdict_go = m_verdict_tvalid && m_verdict_tready;

always @(posedge clk) begin
    err_set_reg <= verdict_go && m_verdict_tdata != 3'd0;
    err_conn_reg <= m_verdict_tuser;
    if (ord_pop && p_last[sel]) begin
        vdone_reg <= vdone_reg + 8'd1;
    end
    if (verdict_go) begin
        vexp_reg <= vexp_reg + 8'd1;
    end
    if (rst) begin
        err_set_reg <= 1'b0;
        vexp_reg <= 8'd0;
        vdone_reg <= 8'd0;
    end
end

endmodule

`resetall
