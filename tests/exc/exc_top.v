// exc_top: the test-only top of tests/exc. rnic_admin (programmed through
// its command port, as the driver's mailbox writes reach it) and the
// exception ring writer rnic_exc, wired as rnic_dev is to wire them:
//   admin evr_valid, evr_set, evr_exc_*  -> rnic_exc
// rnic_exc's exception stream input (s_exc_*, rnic_rx's m_exc_*), its DMA
// write client port (exwr_ request, exwd_ data, exwb_ done: to
// rnic_dma_wr in the device), its event records (ev_*: to rnic_evq) and
// its lost count go out to the testbench.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module exc_top #(
    parameter DATA_W  = 64,
    parameter CONN_W  = 3,
    parameter STAG_AW = 4,
    parameter CQ_W    = 3,
    parameter VEC_W   = 2,
    parameter WIN_W   = 2
) (
    input  wire                clk,
    input  wire                rst,

    input  wire                cmd_wr,
    input  wire [7:0]          cmd_op,
    input  wire [255:0]        cmd_args,
    output wire                busy,
    output wire [7:0]          status_code,

    input  wire [DATA_W-1:0]   s_exc_tdata,
    input  wire [DATA_W/8-1:0] s_exc_tkeep,
    input  wire                s_exc_tvalid,
    output wire                s_exc_tready,
    input  wire                s_exc_tlast,
    input  wire [CONN_W+50:0]  s_exc_tuser,

    output wire                exwr_valid,
    input  wire                exwr_ready,
    output wire [63:0]         exwr_addr,
    output wire [31:0]         exwr_len,
    output wire [2:0]          exwr_what,
    output wire                exwd_valid,
    input  wire                exwd_ready,
    output wire [DATA_W-1:0]   exwd_data,
    output wire [DATA_W/8-1:0] exwd_keep,
    output wire                exwd_last,
    input  wire                exwb_valid,
    output wire                exwb_ready,
    input  wire                exwb_err,

    output wire                ev_valid,
    input  wire                ev_ready,
    output wire [119:0]        ev_entry,

    output wire [31:0]         lost_count
);

wire        evr_valid, evr_set;
wire [63:0] evr_exc_ring;
wire [4:0]  evr_exc_log2, evr_exc_buf_log2;

/* verilator lint_off PINCONNECTEMPTY */
rnic_admin #(
    .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
    .SQ_LOG2(10), .RQ_LOG2(10), .CQ_LOG2(12)
) admin (
    .ci_qpn(), .sq_ci(16'd0), .rq_ci(16'd0), .clk(clk), .rst(rst),
    .cmd_wr(cmd_wr), .cmd_op(cmd_op), .cmd_args(cmd_args), .busy(busy), .status_code(status_code),
    .last_op(), .out_args(), .out_args_we(), .overrun(),
    .mr_wr_valid(), .mr_wr_index(), .mr_wr_key(), .mr_wr_access(), .mr_wr_pd(), .mr_wr_bound(),
    .mr_wr_base_to(), .mr_wr_len(), .mr_wr_addr(),
    .mr_inv_valid(), .mr_inv_index(), .dp_inv_valid(1'b0), .dp_inv_index({STAG_AW{1'b0}}),
    .mr_rd_en(1'b0), .mr_rd_index({STAG_AW{1'b0}}), .mr_rd_valid(), .mr_rd_entry(),
    .qp_rts_valid(), .qp_rts_qpn(), .qp_rts_params(),
    .qp_state_wr_valid(), .qp_state_wr_qpn(), .qp_state_wr_state(), .qp_state_wr_pd(),
    .qp_rd_en(1'b0), .qp_rd_qpn({CONN_W{1'b0}}), .qp_rd_state(), .qp_rd_ctx(),
    .rts_rd_en(1'b0), .rts_rd_qpn({CONN_W{1'b0}}), .rts_rd_params(),
    .cq_rd_en(1'b0), .cq_rd_cqn({CQ_W{1'b0}}), .cq_rd_valid(), .cq_rd_ctx(),
    .cq_cfg_valid(), .cq_cfg_cqn(), .cq_cfg_create(),
    .evr_valid(evr_valid), .evr_set(evr_set), .evr_ring(), .evr_log2(),
    .evr_exc_ring(evr_exc_ring), .evr_exc_log2(evr_exc_log2), .evr_exc_buf_log2(evr_exc_buf_log2),
    .win_wr_valid(), .win_wr_slot(), .win_wr_addr(), .win_wr_len()
);
/* verilator lint_on PINCONNECTEMPTY */

rnic_exc #(.DATA_W(DATA_W), .CONN_W(CONN_W)) exc (
    .clk(clk), .rst(rst),
    .s_exc_tdata(s_exc_tdata), .s_exc_tkeep(s_exc_tkeep), .s_exc_tvalid(s_exc_tvalid),
    .s_exc_tready(s_exc_tready), .s_exc_tlast(s_exc_tlast), .s_exc_tuser(s_exc_tuser),
    .evr_valid(evr_valid), .evr_set(evr_set), .evr_exc_ring(evr_exc_ring), .evr_exc_log2(evr_exc_log2),
    .evr_exc_buf_log2(evr_exc_buf_log2),
    .wr_req_valid(exwr_valid), .wr_req_ready(exwr_ready), .wr_req_addr(exwr_addr), .wr_req_len(exwr_len),
    .wr_req_what(exwr_what),
    .wr_valid(exwd_valid), .wr_ready(exwd_ready), .wr_data(exwd_data), .wr_keep(exwd_keep), .wr_last(exwd_last),
    .wr_done_valid(exwb_valid), .wr_done_ready(exwb_ready), .wr_done_err(exwb_err),
    .ev_valid(ev_valid), .ev_ready(ev_ready), .ev_entry(ev_entry),
    .lost_count(lost_count)
);

endmodule
