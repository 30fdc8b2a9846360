// rnic_admin: the admin mailbox's executor (docs/device.md, "Admin
// commands"). It takes a command as the driver wrote it (the opcode of the
// CMD write and the eight ARG words), checks it in full, applies it to the
// admin tables, and answers STATUS.CODE and, for QP_DRAIN, the output ARG
// words. Every status and output word equals the Go model's
// (driver/model/admin.go, the oracle) for the same command sequence; the
// cross-check driver/simdev/admin_xcheck_test.go runs both.
//
// Checks, in the model's order (the first failing one answers):
//   decode   an unknown opcode (BAD_OPCODE); a non-zero unused word or field
//            or an unknown MR access bit (BAD_ARG), as hostif.DecodeCommand;
//   index    qpn, cqn, MR index, vector, bound qpn, window slot (BAD_INDEX);
//   state    CREATE_CQ a free CQ; DESTROY_CQ a created CQ no QP completes
//            into (a reference count per CQ, kept by CREATE_QP and
//            DESTROY_QP, stands for the model's scan of the QPs); CREATE_QP
//            a free QP and created CQs; QP_RTS a created QP; QP_DRAIN any QP
//            not free; DESTROY_QP a drained QP; MR_INVALIDATE a valid entry
//            (BAD_STATE);
//   argument ring sizes (log2 1..SQ_LOG2/RQ_LOG2/CQ_LOG2, event and
//            exception rings 1..16, exception buffers 2^6..2^16), alignment
//            (to the ring's size and to 4 KiB), PD of 16 bits, MULPDU not 0,
//            MR_WRITE's base TO + length and address + length without
//            carry, DMA_WINDOW's address and length multiples of 4 KiB
//            without carry (BAD_ARG);
//   window   each ring (and a non-empty MR) inside one declared DMA window
//            (OUT_OF_WINDOW).
// Nothing is written before the last check passed: a refusal leaves every
// table as it was.
//
// Tables: per CQ (sdp_ram): ring, log2, vector; the reference count
// (internal); per QP: state (flip-flops: free, created, RTS, drained),
// the context (sdp_ram: PD, rings, log2 sizes, CQs) and the QP_RTS
// parameters (sdp_ram); per MR: valid (flip-flops) and the entry (sdp_ram:
// key, access, PD, bound qpn, base TO, length, address); per window slot:
// non-empty (flip-flops), address and end (sdp_ram, internal); the event
// ring configuration (flip-flops). Reset clears the valid bits and states
// (the RAMs' words are then never read as valid); a CQ's reference count
// is written 0 by CREATE_CQ (a free CQ has no QP).
//
// Complete: every command, as the model executes it today. Waiting for the
// datapath: QP_DRAIN's fence (stop the SQ, flush, wait for placements and
// completions) and the MR fences (MR_INVALIDATE and MR_WRITE over a valid
// entry wait until no placement or DMA read through the entry is in
// flight). Today nothing is in flight, as in the model: QP_DRAIN answers
// at once, with the SQ and RQ engines' consumer indices of the QP (sq_ci,
// rq_ci for ci_qpn) as they stand in the clock its output words are
// written.
//
// Interface:
//   cmd_wr, cmd_op, cmd_args   the CMD write strobe, its opcode ([7:0] of
//                   the written word) and ARG0..ARG7 (ARGi in [32i+31:32i])
//                   as the driver wrote them; taken when busy is low
//   busy, status_code          STATUS.BUSY, STATUS.CODE (the last result;
//                   held while busy)
//   last_op         CMD's read value: the opcode of the last accepted command
//   out_args, out_args_we      QP_DRAIN's output words (ARG0 SQ consumer
//                   index, ARG1 RQ's, the rest 0) and their one-clock write
//                   enable into ARG0..ARG7
//   ci_qpn, sq_ci, rq_ci       the command's qpn out, the SQ and RQ engines'
//                   consumer indices of it in (rnic_sq's, rnic_rq's
//                   ci_rd_*; combinational there)
//   overrun         one-clock pulse: a CMD write while busy (ignored;
//                   rnic_dev counts it in admin_overrun)
// Toward the datapath (rnic_dev leaves them unconnected until it exists):
//   mr_wr_*         one-clock pulse per MR_WRITE that succeeded: the entry
//                   (ddp_rx's s_stag: index, key, access, PD, bound qpn,
//                   base TO, length, device address)
//   mr_inv_*        one-clock pulse per MR_INVALIDATE that succeeded
//   mr_rd_*         the MR table's read port (rd_en, index; the entry and
//                   its valid bit one clock later)
//   qp_rts_*        one-clock pulse per QP_RTS that succeeded: qpn and the
//                   Full Operation parameters (the connection configuration
//                   of rnic_tx and rnic_rx)
//   qp_state_wr_*   one-clock pulse per QP state change: qpn, new state
//                   (0 free, 1 created, 2 RTS, 3 drained); with CREATE_QP
//                   (state 1) qp_state_wr_pd is the QP's PD
//   qp_rd_*         the QP context's read port (state, PD, rings, CQs; one
//                   clock); rts_rd_* the QP_RTS parameters' read port
//   cq_rd_*         the CQ table's read port (valid, ring, log2, vector)
//   cq_cfg_*        one-clock pulse per CREATE_CQ (create 1) and DESTROY_CQ
//                   (create 0) that succeeded, with the cqn: the CQ writer
//                   (rnic_cq) resets the CQ's indices, overrun and arm
//   evr_*           EVENT_RING's configuration (valid once accepted);
//                   evr_set pulses per EVENT_RING that succeeded (the event
//                   writer, rnic_evq, restarts its producer index at 0)
//   dp_inv_*        in: one-clock pulse from the datapath, a Send with
//                   Invalidate invalidated this MR entry (RFC 5040 5.4;
//                   rnic_rq): its valid bit clears, as MR_INVALIDATE's
//                   does, without a pulse on mr_inv_* (ddp_rx's STag table
//                   did it already). A command that writes the same entry
//                   in the same clock wins; one that checked the entry
//                   before the pulse answers as it found it.
//   win_wr_*        one-clock pulse per DMA_WINDOW that succeeded: slot,
//                   device address, length (0: the slot cleared), for the
//                   DMA engines' own copies of the window table
//                   (rnic_dma_rd, rnic_dma_wr)
//
// Cycles: a command is taken the clock cmd_wr is high (busy rises with the
// next edge); decode and RAM reads (1 clock), the state and argument checks
// (1), the window scan, one slot a clock (2^WIN_W + 1 clocks, run for every
// command so that each takes the same time), the writes (1; CREATE_QP and
// DESTROY_QP 4 more for the two CQs' reference counts); busy falls with the
// status. busy is high 2^WIN_W + 4 clocks (+4), one command at a time
// (tests/admin checks the figure). The pulses toward the datapath come in
// the clock busy falls in (the QP_DRAIN output words' write enable too).
//
// Parameters: as rnic_dev's (CONN_W, STAG_AW, CQ_W, VEC_W, WIN_W, SQ_LOG2,
// RQ_LOG2, CQ_LOG2).
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_admin #(
    parameter CONN_W  = 6,
    parameter STAG_AW = 10,
    parameter CQ_W    = 6,
    parameter VEC_W   = 2,
    parameter WIN_W   = 4,
    parameter SQ_LOG2 = 10,
    parameter RQ_LOG2 = 10,
    parameter CQ_LOG2 = 12
) (
    input  wire               clk,
    input  wire               rst,

    input  wire               cmd_wr,
    input  wire [7:0]         cmd_op,
    input  wire [255:0]       cmd_args,
    output wire               busy,
    output wire [7:0]         status_code,
    output wire [7:0]         last_op,
    output wire [255:0]       out_args,
    output wire               out_args_we,
    output wire               overrun,
    // QP_DRAIN's output words: the command's qpn, and the SQ and RQ
    // engines' consumer indices of it (rnic_sq's, rnic_rq's ci_rd_*).
    output wire [CONN_W-1:0]  ci_qpn,
    input  wire [15:0]        sq_ci,
    input  wire [15:0]        rq_ci,

    output wire               mr_wr_valid,
    output wire [STAG_AW-1:0] mr_wr_index,
    output wire [7:0]         mr_wr_key,
    output wire [3:0]         mr_wr_access,
    output wire [15:0]        mr_wr_pd,
    output wire [15:0]        mr_wr_bound,
    output wire [63:0]        mr_wr_base_to,
    output wire [63:0]        mr_wr_len,
    output wire [63:0]        mr_wr_addr,
    output wire               mr_inv_valid,
    output wire [STAG_AW-1:0] mr_inv_index,
    input  wire               dp_inv_valid,
    input  wire [STAG_AW-1:0] dp_inv_index,
    input  wire               mr_rd_en,
    input  wire [STAG_AW-1:0] mr_rd_index,
    output wire               mr_rd_valid,
    output wire [235:0]       mr_rd_entry,   // {key, access, pd, bound, base_to, len, addr}

    output wire               qp_rts_valid,
    output wire [CONN_W-1:0]  qp_rts_qpn,
    output wire [227:0]       qp_rts_params, // {ird, ord, mulpdu, flags, tx marker base, rx marker base, tx seq, rx seq, rx msn 0, rx msn 1}
    output wire               qp_state_wr_valid,
    output wire [CONN_W-1:0]  qp_state_wr_qpn,
    output wire [1:0]         qp_state_wr_state,
    output wire [15:0]        qp_state_wr_pd,
    input  wire               qp_rd_en,
    input  wire [CONN_W-1:0]  qp_rd_qpn,
    output wire [1:0]         qp_rd_state,
    output wire [16+64+64+5+5+2*CQ_W-1:0] qp_rd_ctx,    // {pd, sq ring, rq ring, sq log2, rq log2, send cqn, recv cqn}
    input  wire               rts_rd_en,
    input  wire [CONN_W-1:0]  rts_rd_qpn,
    output wire [227:0]       rts_rd_params,

    input  wire               cq_rd_en,
    input  wire [CQ_W-1:0]    cq_rd_cqn,
    output wire               cq_rd_valid,
    output wire [64+5+VEC_W-1:0] cq_rd_ctx,    // {ring, log2, vector}
    output wire               cq_cfg_valid,
    output wire [CQ_W-1:0]    cq_cfg_cqn,
    output wire               cq_cfg_create,

    output wire               evr_valid,
    output wire               evr_set,
    output wire [63:0]        evr_ring,
    output wire [4:0]         evr_log2,
    output wire [63:0]        evr_exc_ring,
    output wire [4:0]         evr_exc_log2,
    output wire [4:0]         evr_exc_buf_log2,

    output wire               win_wr_valid,
    output wire [WIN_W-1:0]   win_wr_slot,
    output wire [63:0]        win_wr_addr,
    output wire [63:0]        win_wr_len
);
initial begin
    if (CONN_W < 1 || CONN_W > 12 || CQ_W < 1 || CQ_W > 12 || VEC_W < 1 || VEC_W > 4 ||
        STAG_AW < 1 || STAG_AW > 16 || WIN_W < 1 || WIN_W > 8) begin
        $error("rnic_admin: CONN_W and CQ_W must be 1 to 12, VEC_W 1 to 4, STAG_AW 1 to 16, WIN_W 1 to 8; got %0d, %0d, %0d, %0d, %0d",
               CONN_W, CQ_W, VEC_W, STAG_AW, WIN_W);
        $finish;
    end
    if (SQ_LOG2 < 1 || SQ_LOG2 > 16 || RQ_LOG2 < 1 || RQ_LOG2 > 16 || CQ_LOG2 < 1 || CQ_LOG2 > 16) begin
        $error("rnic_admin: SQ_LOG2, RQ_LOG2 and CQ_LOG2 must be 1 to 16 (16-bit ring indices), got %0d, %0d, %0d",
               SQ_LOG2, RQ_LOG2, CQ_LOG2);
        $finish;
    end
end

localparam QPS     = 1 << CONN_W;
localparam CQS     = 1 << CQ_W;
localparam STAGS   = 1 << STAG_AW;
localparam WINDOWS = 1 << WIN_W;
localparam [32:0] QPS_33     = 33'd1 << CONN_W;
localparam [32:0] CQS_33     = 33'd1 << CQ_W;
localparam [32:0] STAGS_33   = 33'd1 << STAG_AW;
localparam [32:0] VECTORS_33 = 33'd1 << VEC_W;
localparam [32:0] WINDOWS_33 = 33'd1 << WIN_W;
localparam [31:0] CQ_MAX = CQ_LOG2;
localparam [7:0]  SQ_MAX = SQ_LOG2[7:0];
localparam [7:0]  RQ_MAX = RQ_LOG2[7:0];
localparam REF_W    = CONN_W + 2;   // each QP holds a CQ at most twice
localparam QP_CTX_W = 16 + 64 + 64 + 5 + 5 + 2 * CQ_W;
localparam CQ_CTX_W = 64 + 5 + VEC_W;

// Opcodes and status codes (docs/device.md, driver/hostif/admin.go).
localparam [7:0] OP_CREATE_CQ = 8'h01, OP_DESTROY_CQ = 8'h02, OP_CREATE_QP = 8'h03,
                 OP_QP_RTS = 8'h04, OP_QP_DRAIN = 8'h05, OP_DESTROY_QP = 8'h06,
                 OP_MR_WRITE = 8'h07, OP_MR_INVALIDATE = 8'h08, OP_EVENT_RING = 8'h09,
                 OP_DMA_WINDOW = 8'h0a;
localparam [7:0] ST_OK = 8'd0, ST_BAD_OPCODE = 8'd1, ST_BAD_INDEX = 8'd2, ST_BAD_STATE = 8'd3,
                 ST_BAD_ARG = 8'd4, ST_OUT_OF_WINDOW = 8'd5;
localparam [1:0] QP_FREE = 2'd0, QP_CREATED = 2'd1, QP_RTS = 2'd2, QP_DRAINED = 2'd3;

// FSM: IDLE -> DEC (RAM reads) -> CHK (checks) -> SCAN (window slots) ->
// APPLY (writes) [-> RA -> WA -> RB -> WB: reference counts] -> IDLE.
localparam [3:0] S_IDLE = 4'd0, S_DEC = 4'd1, S_CHK = 4'd2, S_SCAN = 4'd3, S_APPLY = 4'd4,
                 S_RA = 4'd5, S_WA = 4'd6, S_RB = 4'd7, S_WB = 4'd8;

// The alignment a ring needs: to its size 2^k and to 4 KiB (model's aligned).
function automatic aligned_f(input [63:0] addr, input [6:0] k);
    reg [6:0]  kk;
    reg [63:0] m;
    begin
        kk = (k < 7'd12) ? 7'd12 : k;
        m = (64'd1 << kk) - 64'd1;
        aligned_f = (addr & m) == 64'd0;
    end
endfunction

reg  [3:0]   state_reg, state_next;
reg  [7:0]   op_reg, op_next;
reg  [255:0] args_reg, args_next;
reg  [7:0]   code_reg, code_next;      // STATUS.CODE
reg  [7:0]   res_reg, res_next;        // the command's result before the window check
reg  [WIN_W:0] scan_reg, scan_next;    // slot read this clock (WINDOWS: done reading)
reg          need_a_reg, need_a_next, need_b_reg, need_b_next;
reg          hit_a_reg, hit_a_next, hit_b_reg, hit_b_next;
reg  [63:0]  a_addr_reg, a_addr_next, b_addr_reg, b_addr_next;
reg  [64:0]  a_end_reg, a_end_next, b_end_reg, b_end_next;
reg  [CQ_W-1:0] ref_s_reg, ref_s_next, ref_r_reg, ref_r_next;  // CQs whose counts change
reg          ref_up_reg, ref_up_next;
reg          scan_rd_valid_reg;        // win_ram's word is that of scan_reg - 1
reg          scan_nz_reg;

reg  [QPS*2-1:0]   qp_state_reg, qp_state_next;
reg  [CQS-1:0]     cq_valid_reg, cq_valid_next;
reg  [STAGS-1:0]   mr_valid_reg, mr_valid_next;
reg  [WINDOWS-1:0] win_nz_reg, win_nz_next;
reg          evr_valid_reg, evr_valid_next;
reg  [63:0]  evr_ring_reg, evr_ring_next, evr_exc_ring_reg, evr_exc_ring_next;
reg  [4:0]   evr_log2_reg, evr_log2_next, evr_exc_log2_reg, evr_exc_log2_next, evr_buf_reg, evr_buf_next;
reg  [7:0]   last_op_reg, last_op_next;

// The arguments as typed fields.
wire [31:0] a0 = args_reg[31:0],    a1 = args_reg[63:32],   a2 = args_reg[95:64],   a3 = args_reg[127:96];
wire [31:0] a4 = args_reg[159:128], a5 = args_reg[191:160], a6 = args_reg[223:192], a7 = args_reg[255:224];

// --- the tables' RAMs -----------------------------------------------------
reg                 cq_wr_en;
wire [CQ_CTX_W-1:0] cq_wr_data = {a2, a1, a3[4:0], a4[VEC_W-1:0]};
sdp_ram #(.WIDTH(CQ_CTX_W), .ADDR_W(CQ_W)) cq_ram (
    .clk(clk), .wr_en(cq_wr_en), .wr_addr(a0[CQ_W-1:0]), .wr_data(cq_wr_data),
    .rd_en(cq_rd_en), .rd_addr(cq_rd_cqn), .rd_data(cq_rd_ctx));

reg              ref_wr_en, ref_rd_en;
reg  [CQ_W-1:0]  ref_wr_addr, ref_rd_addr;
reg  [REF_W-1:0] ref_wr_data;
wire [REF_W-1:0] ref_rd_data;
sdp_ram #(.WIDTH(REF_W), .ADDR_W(CQ_W)) ref_ram (
    .clk(clk), .wr_en(ref_wr_en), .wr_addr(ref_wr_addr), .wr_data(ref_wr_data),
    .rd_en(ref_rd_en), .rd_addr(ref_rd_addr), .rd_data(ref_rd_data));

reg                 qp_wr_en;
wire [QP_CTX_W-1:0] qp_wr_data = {a1[15:0], a3, a2, a5, a4, a6[4:0], a6[12:8], a7[CQ_W-1:0], a7[16 +: CQ_W]};
sdp_ram #(.WIDTH(QP_CTX_W), .ADDR_W(CONN_W)) qp_ram (
    .clk(clk), .wr_en(qp_wr_en), .wr_addr(a0[CONN_W-1:0]), .wr_data(qp_wr_data),
    .rd_en(qp_rd_en), .rd_addr(qp_rd_qpn), .rd_data(qp_rd_ctx));

// The QPs' CQ pairs again, for DESTROY_QP (the context's port is the datapath's).
reg                 qpcq_rd_en;
wire [2*CQ_W-1:0]   qpcq_rd_data;
sdp_ram #(.WIDTH(2 * CQ_W), .ADDR_W(CONN_W)) qpcq_ram (
    .clk(clk), .wr_en(qp_wr_en), .wr_addr(a0[CONN_W-1:0]), .wr_data({a7[CQ_W-1:0], a7[16 +: CQ_W]}),
    .rd_en(qpcq_rd_en), .rd_addr(a0[CONN_W-1:0]), .rd_data(qpcq_rd_data));

reg          rts_wr_en;
wire [227:0] rts_wr_data = {a0[23:16], a0[31:24], a1[15:0], a1[19:16], a2, a3, a4, a5, a6, a7};
sdp_ram #(.WIDTH(228), .ADDR_W(CONN_W)) rts_ram (
    .clk(clk), .wr_en(rts_wr_en), .wr_addr(a0[CONN_W-1:0]), .wr_data(rts_wr_data),
    .rd_en(rts_rd_en), .rd_addr(rts_rd_qpn), .rd_data(rts_rd_params));

reg          mr_wr_en;
wire [235:0] mr_wr_data = {a0[23:16], a0[27:24], a1[15:0], a1[31:16], a3, a2, a5, a4, a7, a6};
sdp_ram #(.WIDTH(236), .ADDR_W(STAG_AW)) mr_ram (
    .clk(clk), .wr_en(mr_wr_en), .wr_addr(a0[STAG_AW-1:0]), .wr_data(mr_wr_data),
    .rd_en(mr_rd_en), .rd_addr(mr_rd_index), .rd_data(mr_rd_entry));

// Windows: {address, end}; end = address + length has no carry (DMA_WINDOW).
reg          win_wr_en;
wire [63:0]  win_in_addr = {a2, a1};
wire [64:0]  win_wr_end  = {1'b0, a2, a1} + {1'b0, a4, a3};
wire [127:0] win_rd_data;
sdp_ram #(.WIDTH(128), .ADDR_W(WIN_W)) win_ram (
    .clk(clk), .wr_en(win_wr_en), .wr_addr(a0[WIN_W-1:0]), .wr_data({win_in_addr, win_wr_end[63:0]}),
    .rd_en(state_reg == S_SCAN), .rd_addr(scan_reg[WIN_W-1:0]), .rd_data(win_rd_data));

// Valid bits beside the datapath's read ports, read in the same clock.
reg       mr_rd_valid_reg, cq_rd_valid_reg;
reg [1:0] qp_rd_state_reg;
always @(posedge clk) begin
    if (mr_rd_en) mr_rd_valid_reg <= mr_valid_reg[mr_rd_index];
    if (cq_rd_en) cq_rd_valid_reg <= cq_valid_reg[cq_rd_cqn];
    if (qp_rd_en) qp_rd_state_reg <= qp_state_reg[2 * qp_rd_qpn +: 2];
    if (rst) begin
        mr_rd_valid_reg <= 1'b0;
        cq_rd_valid_reg <= 1'b0;
        qp_rd_state_reg <= QP_FREE;
    end
end

// --- the checks (state CHK) -----------------------------------------------
// Indices, truncated: used only once the index check passed.
wire [CONN_W-1:0] qpn    = a0[CONN_W-1:0];
wire [CQ_W-1:0]   cqn    = a0[CQ_W-1:0];
wire [CQ_W-1:0]   scq    = a7[CQ_W-1:0];
wire [CQ_W-1:0]   rcq    = a7[16 +: CQ_W];
wire [1:0]        qst    = qp_state_reg[2 * qpn +: 2];

wire a0_ge_qps   = {1'b0, a0} >= QPS_33;
wire a0_ge_cqs   = {1'b0, a0} >= CQS_33;
wire a0_ge_stags = {1'b0, a0} >= STAGS_33;
wire a0_ge_wins  = {1'b0, a0} >= WINDOWS_33;
wire a4_ge_vecs  = {1'b0, a4} >= VECTORS_33;
wire q16_ge_qps  = {17'd0, a0[15:0]} >= QPS_33;
wire m16_ge_stg  = {17'd0, a0[15:0]} >= STAGS_33;
wire bnd_ge_qps  = a1[31:16] != 16'hffff && {17'd0, a1[31:16]} >= QPS_33;
wire scq_ge_cqs  = {17'd0, a7[15:0]} >= CQS_33;
wire rcq_ge_cqs  = {17'd0, a7[31:16]} >= CQS_33;

// Ring checks: log2 in 1..max and aligned (model's ringOK).
wire cq_ring_ok = a3 >= 32'd1 && a3 <= CQ_MAX && aligned_f({a2, a1}, 7'd5 + {2'd0, a3[4:0]});
wire sq_ring_ok = a6[7:0] >= 8'd1 && a6[7:0] <= SQ_MAX && aligned_f({a3, a2}, 7'd6 + {2'd0, a6[4:0]});
wire rq_ring_ok = a6[15:8] >= 8'd1 && a6[15:8] <= RQ_MAX && aligned_f({a5, a4}, 7'd5 + {2'd0, a6[12:8]});
wire [7:0] ev_l = a2[7:0], ex_l = a2[15:8], ex_b = a2[23:16];
wire ev_arg_ok = ev_l != 8'd0 && ev_l <= 8'd16 && ex_l != 8'd0 && ex_l <= 8'd16 &&
                 ex_b >= 8'd6 && ex_b <= 8'd16 &&
                 aligned_f({a1, a0}, 7'd4 + {2'd0, ev_l[4:0]}) &&
                 aligned_f({a4, a3}, {2'd0, ex_l[4:0]} + {2'd0, ex_b[4:0]});
/* verilator lint_off UNUSEDSIGNAL */
wire [64:0] mr_to_end  = {1'b0, a3, a2} + {1'b0, a5, a4};   // only its carry matters
/* verilator lint_on UNUSEDSIGNAL */
wire [64:0] mr_end     = {1'b0, a7, a6} + {1'b0, a5, a4};

// Size 2^k as a 65-bit end: address + 2^k.
function automatic [64:0] end_f(input [63:0] addr, input [6:0] k);
    begin
        end_f = {1'b0, addr} + (65'd1 << k);
    end
endfunction

reg [7:0] chk;   // the first failing check before the windows
reg       na, nb;
reg [63:0] aa, ba;
reg [64:0] ae, be;
always @* begin
    chk = ST_OK;
    na = 1'b0; nb = 1'b0;
    aa = 64'd0; ba = 64'd0; ae = 65'd0; be = 65'd0;
    case (op_reg)
    OP_CREATE_CQ: begin
        if (a5 != 0 || a6 != 0 || a7 != 0) chk = ST_BAD_ARG;
        else if (a0_ge_cqs || a4_ge_vecs) chk = ST_BAD_INDEX;
        else if (cq_valid_reg[cqn]) chk = ST_BAD_STATE;
        else if (!cq_ring_ok) chk = ST_BAD_ARG;
        na = 1'b1; aa = {a2, a1}; ae = end_f({a2, a1}, 7'd5 + {2'd0, a3[4:0]});
    end
    OP_DESTROY_CQ: begin
        if (a1 != 0 || a2 != 0 || a3 != 0 || a4 != 0 || a5 != 0 || a6 != 0 || a7 != 0) chk = ST_BAD_ARG;
        else if (a0_ge_cqs) chk = ST_BAD_INDEX;
        else if (!cq_valid_reg[cqn] || ref_rd_data != 0) chk = ST_BAD_STATE;
    end
    OP_CREATE_QP: begin
        if (a6[31:16] != 0) chk = ST_BAD_ARG;
        else if (a0_ge_qps || scq_ge_cqs || rcq_ge_cqs) chk = ST_BAD_INDEX;
        else if (qst != QP_FREE || !cq_valid_reg[scq] || !cq_valid_reg[rcq]) chk = ST_BAD_STATE;
        else if (a1[31:16] != 0 || !sq_ring_ok || !rq_ring_ok) chk = ST_BAD_ARG;
        na = 1'b1; aa = {a3, a2}; ae = end_f({a3, a2}, 7'd6 + {2'd0, a6[4:0]});
        nb = 1'b1; ba = {a5, a4}; be = end_f({a5, a4}, 7'd5 + {2'd0, a6[12:8]});
    end
    OP_QP_RTS: begin
        if (a1[31:20] != 0) chk = ST_BAD_ARG;
        else if (q16_ge_qps) chk = ST_BAD_INDEX;
        else if (qst != QP_CREATED) chk = ST_BAD_STATE;
        else if (a1[15:0] == 16'd0) chk = ST_BAD_ARG;
    end
    OP_QP_DRAIN: begin
        if (a1 != 0 || a2 != 0 || a3 != 0 || a4 != 0 || a5 != 0 || a6 != 0 || a7 != 0) chk = ST_BAD_ARG;
        else if (a0_ge_qps) chk = ST_BAD_INDEX;
        else if (qst == QP_FREE) chk = ST_BAD_STATE;
    end
    OP_DESTROY_QP: begin
        if (a1 != 0 || a2 != 0 || a3 != 0 || a4 != 0 || a5 != 0 || a6 != 0 || a7 != 0) chk = ST_BAD_ARG;
        else if (a0_ge_qps) chk = ST_BAD_INDEX;
        else if (qst != QP_DRAINED) chk = ST_BAD_STATE;
    end
    OP_MR_WRITE: begin
        if (a0[31:28] != 0) chk = ST_BAD_ARG;
        else if (m16_ge_stg || bnd_ge_qps) chk = ST_BAD_INDEX;
        else if (mr_to_end[64] || mr_end[64]) chk = ST_BAD_ARG;
        na = {a5, a4} != 64'd0; aa = {a7, a6}; ae = mr_end;
    end
    OP_MR_INVALIDATE: begin
        if (a1 != 0 || a2 != 0 || a3 != 0 || a4 != 0 || a5 != 0 || a6 != 0 || a7 != 0) chk = ST_BAD_ARG;
        else if (a0_ge_stags) chk = ST_BAD_INDEX;
        else if (!mr_valid_reg[a0[STAG_AW-1:0]]) chk = ST_BAD_STATE;
    end
    OP_EVENT_RING: begin
        if (a5 != 0 || a6 != 0 || a7 != 0 || a2[31:24] != 0) chk = ST_BAD_ARG;
        else if (!ev_arg_ok) chk = ST_BAD_ARG;
        na = 1'b1; aa = {a1, a0}; ae = end_f({a1, a0}, 7'd4 + {2'd0, ev_l[4:0]});
        nb = 1'b1; ba = {a4, a3}; be = end_f({a4, a3}, {2'd0, ex_l[4:0]} + {2'd0, ex_b[4:0]});
    end
    OP_DMA_WINDOW: begin
        if (a5 != 0 || a6 != 0 || a7 != 0) chk = ST_BAD_ARG;
        else if (a0_ge_wins) chk = ST_BAD_INDEX;
        else if (win_wr_end[64] || a1[11:0] != 12'd0 || a3[11:0] != 12'd0) chk = ST_BAD_ARG;
    end
    default: chk = ST_BAD_OPCODE;
    endcase
end

// A window slot holds [w_addr, w_end); a region [addr, end) fits when
// addr >= w_addr and end <= w_end (an end with a carry fits nowhere).
wire [63:0] w_addr = win_rd_data[127:64];
wire [63:0] w_end  = win_rd_data[63:0];
wire fit_a = scan_nz_reg && !a_end_reg[64] && a_addr_reg >= w_addr && a_end_reg[63:0] <= w_end;
wire fit_b = scan_nz_reg && !b_end_reg[64] && b_addr_reg >= w_addr && b_end_reg[63:0] <= w_end;
wire win_ok = (!need_a_reg || hit_a_reg) && (!need_b_reg || hit_b_reg);
wire [7:0] result = (res_reg == ST_OK && !win_ok) ? ST_OUT_OF_WINDOW : res_reg;

reg ovr;
reg out_we;
reg mr_wr_pulse, mr_inv_pulse, rts_pulse, qst_pulse, win_pulse, cq_cfg_pulse, evr_pulse;
reg [1:0] qst_new;

always @* begin
    state_next = state_reg;
    op_next = op_reg;
    args_next = args_reg;
    code_next = code_reg;
    res_next = res_reg;
    scan_next = scan_reg;
    need_a_next = need_a_reg; need_b_next = need_b_reg;
    hit_a_next = hit_a_reg; hit_b_next = hit_b_reg;
    a_addr_next = a_addr_reg; a_end_next = a_end_reg;
    b_addr_next = b_addr_reg; b_end_next = b_end_reg;
    ref_s_next = ref_s_reg; ref_r_next = ref_r_reg; ref_up_next = ref_up_reg;
    qp_state_next = qp_state_reg;
    cq_valid_next = cq_valid_reg;
    mr_valid_next = mr_valid_reg;
    if (dp_inv_valid) mr_valid_next[dp_inv_index] = 1'b0;
    win_nz_next = win_nz_reg;
    evr_valid_next = evr_valid_reg;
    evr_ring_next = evr_ring_reg; evr_exc_ring_next = evr_exc_ring_reg;
    evr_log2_next = evr_log2_reg; evr_exc_log2_next = evr_exc_log2_reg; evr_buf_next = evr_buf_reg;
    last_op_next = last_op_reg;
    ovr = 1'b0;
    out_we = 1'b0;
    cq_wr_en = 1'b0; qp_wr_en = 1'b0; rts_wr_en = 1'b0; mr_wr_en = 1'b0; win_wr_en = 1'b0;
    ref_wr_en = 1'b0; ref_wr_addr = cqn; ref_wr_data = {REF_W{1'b0}};
    ref_rd_en = 1'b0; ref_rd_addr = cqn;
    qpcq_rd_en = 1'b0;
    mr_wr_pulse = 1'b0; mr_inv_pulse = 1'b0; rts_pulse = 1'b0; qst_pulse = 1'b0; qst_new = QP_FREE;
    win_pulse = 1'b0;
    cq_cfg_pulse = 1'b0; evr_pulse = 1'b0;

    if (cmd_wr && state_reg != S_IDLE) begin
        ovr = 1'b1;   // ignored and counted (docs/device.md, RNAD)
    end
    case (state_reg)
    S_IDLE: begin
        if (cmd_wr) begin
            op_next = cmd_op;
            args_next = cmd_args;
            last_op_next = cmd_op;
            state_next = S_DEC;
        end
    end
    S_DEC: begin
        // The RAM words CHK needs: DESTROY_CQ's count, DESTROY_QP's CQs.
        ref_rd_en = 1'b1;
        qpcq_rd_en = 1'b1;
        state_next = S_CHK;
    end
    S_CHK: begin
        res_next = chk;
        need_a_next = na; need_b_next = nb;
        a_addr_next = aa; a_end_next = ae;
        b_addr_next = ba; b_end_next = be;
        hit_a_next = 1'b0; hit_b_next = 1'b0;
        ref_up_next = op_reg == OP_CREATE_QP;
        if (op_reg == OP_CREATE_QP) begin
            ref_s_next = scq; ref_r_next = rcq;
        end else begin
            ref_s_next = qpcq_rd_data[2*CQ_W-1:CQ_W]; ref_r_next = qpcq_rd_data[CQ_W-1:0];
        end
        scan_next = {(WIN_W + 1){1'b0}};
        state_next = S_SCAN;
    end
    S_SCAN: begin
        // Read slot scan_reg; compare the word of the slot before.
        if (scan_rd_valid_reg) begin
            hit_a_next = hit_a_reg || fit_a;
            hit_b_next = hit_b_reg || fit_b;
        end
        if (scan_reg == WINDOWS[WIN_W:0]) begin
            state_next = S_APPLY;
        end else begin
            scan_next = scan_reg + 1'b1;
        end
    end
    S_APPLY: begin
        code_next = result;
        state_next = S_IDLE;
        if (result == ST_OK) begin
            case (op_reg)
            OP_CREATE_CQ: begin
                cq_wr_en = 1'b1;
                cq_valid_next[cqn] = 1'b1;
                ref_wr_en = 1'b1;   // a free CQ has no QP: its count starts at 0
                cq_cfg_pulse = 1'b1;
            end
            OP_DESTROY_CQ: begin
                cq_valid_next[cqn] = 1'b0;
                cq_cfg_pulse = 1'b1;
            end
            OP_CREATE_QP: begin
                qp_wr_en = 1'b1;
                qp_state_next[2 * qpn +: 2] = QP_CREATED;
                qst_pulse = 1'b1; qst_new = QP_CREATED;
                state_next = S_RA;
            end
            OP_QP_RTS: begin
                rts_wr_en = 1'b1;
                rts_pulse = 1'b1;
                qp_state_next[2 * qpn +: 2] = QP_RTS;
                qst_pulse = 1'b1; qst_new = QP_RTS;
            end
            OP_QP_DRAIN: begin
                // Nothing in flight today: the drain is immediate; the
                // output words are the engines' consumer indices.
                out_we = 1'b1;
                qp_state_next[2 * qpn +: 2] = QP_DRAINED;
                qst_pulse = 1'b1; qst_new = QP_DRAINED;
            end
            OP_DESTROY_QP: begin
                qp_state_next[2 * qpn +: 2] = QP_FREE;
                qst_pulse = 1'b1; qst_new = QP_FREE;
                state_next = S_RA;
            end
            OP_MR_WRITE: begin
                mr_wr_en = 1'b1;
                mr_wr_pulse = 1'b1;
                mr_valid_next[a0[STAG_AW-1:0]] = 1'b1;
            end
            OP_MR_INVALIDATE: begin
                mr_inv_pulse = 1'b1;
                mr_valid_next[a0[STAG_AW-1:0]] = 1'b0;
            end
            OP_EVENT_RING: begin
                evr_valid_next = 1'b1;
                evr_pulse = 1'b1;
                evr_ring_next = {a1, a0};
                evr_log2_next = ev_l[4:0];
                evr_exc_ring_next = {a4, a3};
                evr_exc_log2_next = ex_l[4:0];
                evr_buf_next = ex_b[4:0];
            end
            OP_DMA_WINDOW: begin
                win_wr_en = 1'b1;
                win_pulse = 1'b1;
                win_nz_next[a0[WIN_W-1:0]] = {a4, a3} != 64'd0;
            end
            // verilator coverage_off
            default: ;   // unreachable: only a known opcode answers OK
            // verilator coverage_on
            endcase
        end
        if (state_next == S_RA) begin
            code_next = code_reg;   // the status comes with the counts
        end
    end
    // The two CQs' reference counts: read, write +-1, one after the other
    // (the same CQ twice counts twice).
    S_RA: begin
        ref_rd_en = 1'b1; ref_rd_addr = ref_s_reg;
        state_next = S_WA;
    end
    S_WA: begin
        ref_wr_en = 1'b1; ref_wr_addr = ref_s_reg;
        ref_wr_data = ref_up_reg ? ref_rd_data + 1'b1 : ref_rd_data - 1'b1;
        state_next = S_RB;
    end
    S_RB: begin
        ref_rd_en = 1'b1; ref_rd_addr = ref_r_reg;
        state_next = S_WB;
    end
    S_WB: begin
        ref_wr_en = 1'b1; ref_wr_addr = ref_r_reg;
        ref_wr_data = ref_up_reg ? ref_rd_data + 1'b1 : ref_rd_data - 1'b1;
        code_next = ST_OK;
        state_next = S_IDLE;
    end
    // verilator coverage_off
    default: state_next = S_IDLE;   // unreachable: every state is named above
    // verilator coverage_on
    endcase
end

reg        busy_reg, ovr_reg, out_we_reg;
reg        mr_wr_valid_reg, mr_inv_valid_reg, rts_valid_reg, qst_valid_reg, win_valid_reg;
reg        cq_cfg_valid_reg, evr_set_reg;
reg [1:0]  qst_new_reg;
always @(posedge clk) begin
    state_reg <= state_next;
    op_reg <= op_next;
    args_reg <= args_next;
    code_reg <= code_next;
    res_reg <= res_next;
    scan_reg <= scan_next;
    scan_rd_valid_reg <= state_reg == S_SCAN && scan_reg != WINDOWS[WIN_W:0];
    scan_nz_reg <= win_nz_reg[scan_reg[WIN_W-1:0]];
    need_a_reg <= need_a_next; need_b_reg <= need_b_next;
    hit_a_reg <= hit_a_next; hit_b_reg <= hit_b_next;
    a_addr_reg <= a_addr_next; a_end_reg <= a_end_next;
    b_addr_reg <= b_addr_next; b_end_reg <= b_end_next;
    ref_s_reg <= ref_s_next; ref_r_reg <= ref_r_next; ref_up_reg <= ref_up_next;
    qp_state_reg <= qp_state_next;
    cq_valid_reg <= cq_valid_next;
    mr_valid_reg <= mr_valid_next;
    win_nz_reg <= win_nz_next;
    evr_valid_reg <= evr_valid_next;
    evr_ring_reg <= evr_ring_next; evr_exc_ring_reg <= evr_exc_ring_next;
    evr_log2_reg <= evr_log2_next; evr_exc_log2_reg <= evr_exc_log2_next; evr_buf_reg <= evr_buf_next;
    last_op_reg <= last_op_next;
    busy_reg <= state_next != S_IDLE;
    ovr_reg <= ovr;
    out_we_reg <= out_we;
    mr_wr_valid_reg <= mr_wr_pulse;
    mr_inv_valid_reg <= mr_inv_pulse;
    win_valid_reg <= win_pulse;
    rts_valid_reg <= rts_pulse;
    qst_valid_reg <= qst_pulse;
    cq_cfg_valid_reg <= cq_cfg_pulse;
    evr_set_reg <= evr_pulse;
    qst_new_reg <= qst_new;
    if (rst) begin
        state_reg <= S_IDLE;
        code_reg <= ST_OK;
        last_op_reg <= 8'd0;
        scan_rd_valid_reg <= 1'b0;
        qp_state_reg <= {(QPS * 2){1'b0}};
        cq_valid_reg <= {CQS{1'b0}};
        mr_valid_reg <= {STAGS{1'b0}};
        win_nz_reg <= {WINDOWS{1'b0}};
        evr_valid_reg <= 1'b0;
        busy_reg <= 1'b0;
        ovr_reg <= 1'b0;
        out_we_reg <= 1'b0;
        mr_wr_valid_reg <= 1'b0;
        mr_inv_valid_reg <= 1'b0;
        win_valid_reg <= 1'b0;
        rts_valid_reg <= 1'b0;
        qst_valid_reg <= 1'b0;
        cq_cfg_valid_reg <= 1'b0;
        evr_set_reg <= 1'b0;
    end
end

// The pulses leave registered, one clock after the writes, with the
// command's arguments (held in args_reg until the next command).
assign busy = busy_reg;
assign status_code = code_reg;
assign last_op = last_op_reg;
// QP_DRAIN: ARG0 the SQ's consumer index, ARG1 the RQ's, the rest 0 (the
// engines' indices of the command's QP in the clock the words are written).
assign ci_qpn = qpn;
assign out_args = {192'd0, 16'd0, rq_ci, 16'd0, sq_ci};
assign out_args_we = out_we_reg;
assign overrun = ovr_reg;

assign mr_wr_valid = mr_wr_valid_reg;
assign mr_wr_index = a0[STAG_AW-1:0];
assign mr_wr_key = a0[23:16];
assign mr_wr_access = a0[27:24];
assign mr_wr_pd = a1[15:0];
assign mr_wr_bound = a1[31:16];
assign mr_wr_base_to = {a3, a2};
assign mr_wr_len = {a5, a4};
assign mr_wr_addr = {a7, a6};
assign mr_inv_valid = mr_inv_valid_reg;
assign mr_inv_index = a0[STAG_AW-1:0];
assign mr_rd_valid = mr_rd_valid_reg;

assign qp_rts_valid = rts_valid_reg;
assign qp_rts_qpn = qpn;
assign qp_rts_params = rts_wr_data;
assign qp_state_wr_valid = qst_valid_reg;
assign qp_state_wr_qpn = qpn;
assign qp_state_wr_state = qst_new_reg;
assign qp_state_wr_pd = a1[15:0];   // CREATE_QP's PD (the ARG words are held until the next command)
assign qp_rd_state = qp_rd_state_reg;

assign cq_rd_valid = cq_rd_valid_reg;
assign cq_cfg_valid = cq_cfg_valid_reg;
assign cq_cfg_cqn = cqn;
assign cq_cfg_create = op_reg == OP_CREATE_CQ;

assign evr_valid = evr_valid_reg;
assign evr_set = evr_set_reg;
assign evr_ring = evr_ring_reg;
assign evr_log2 = evr_log2_reg;
assign evr_exc_ring = evr_exc_ring_reg;
assign evr_exc_log2 = evr_exc_log2_reg;
assign evr_exc_buf_log2 = evr_buf_reg;

assign win_wr_valid = win_valid_reg;
assign win_wr_slot = a0[WIN_W-1:0];
assign win_wr_addr = {a2, a1};
assign win_wr_len = {a4, a3};

endmodule

`resetall
