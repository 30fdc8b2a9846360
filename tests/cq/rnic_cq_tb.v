// rnic_cq_tb: the test-only wrapper of tests/cq. rnic_admin (programmed
// through its command port, as the driver's mailbox writes reach it), the
// CQ writer rnic_cq, the event writer rnic_evq and the vectors rnic_irq,
// wired as rnic_dev is to wire them:
//   admin cq_cfg_*, cq_rd_*  <-> rnic_cq;  admin evr_*  -> rnic_evq
//   rnic_cq ev_*  -> rnic_evq source 0;    xev_* (any other engine) -> source 1
//   rnic_cq int_* -> rnic_irq source 0;    rnic_evq int_valid (vector 0) -> source 1
// The two DMA write client ports (cqwr_/cqwd_/cqwb_: request, data, done of
// rnic_cq; evwr_/evwd_/evwb_ of rnic_evq) go out to the testbench's
// responder, as they will go to rnic_dma_wr.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_cq_tb #(
    parameter DATA_W  = 64,
    parameter CONN_W  = 3,
    parameter STAG_AW = 4,
    parameter CQ_W    = 3,
    parameter VEC_W   = 2,
    parameter WIN_W   = 2,
    parameter CQ_LOG2 = 12
) (
    input  wire                clk,
    input  wire                rst,

    input  wire                cmd_wr,
    input  wire [7:0]          cmd_op,
    input  wire [255:0]        cmd_args,
    output wire                busy,
    output wire [7:0]          status_code,

    input  wire                cpl_valid,
    output wire                cpl_ready,
    input  wire [CQ_W-1:0]     cpl_cqn,
    input  wire [247:0]        cpl_entry,

    input  wire                cqdb_valid,
    input  wire [11:0]         cqdb_cqn,
    input  wire [31:0]         cqdb_value,

    input  wire                xev_valid,
    output wire                xev_ready,
    input  wire [119:0]        xev_entry,

    input  wire                vec_req,
    input  wire [7:0]          vec_addr,
    input  wire                vec_req_is_wr,
    input  wire [31:0]         vec_wr_data,
    input  wire [31:0]         vec_wr_biten,
    output wire                vec_rd_ack,
    output wire [31:0]         vec_rd_data,
    output wire                vec_wr_ack,

    output wire                cqwr_valid,
    input  wire                cqwr_ready,
    output wire [63:0]         cqwr_addr,
    output wire [31:0]         cqwr_len,
    output wire [2:0]          cqwr_what,
    output wire                cqwd_valid,
    input  wire                cqwd_ready,
    output wire [DATA_W-1:0]   cqwd_data,
    output wire [DATA_W/8-1:0] cqwd_keep,
    output wire                cqwd_last,
    input  wire                cqwb_valid,
    output wire                cqwb_ready,
    input  wire                cqwb_err,

    output wire                evwr_valid,
    input  wire                evwr_ready,
    output wire [63:0]         evwr_addr,
    output wire [31:0]         evwr_len,
    output wire [2:0]          evwr_what,
    output wire                evwd_valid,
    input  wire                evwd_ready,
    output wire [DATA_W-1:0]   evwd_data,
    output wire [DATA_W/8-1:0] evwd_keep,
    output wire                evwd_last,
    input  wire                evwb_valid,
    output wire                evwb_ready,
    input  wire                evwb_err,

    output wire                ovf_valid,
    input  wire                ovf_ready,
    output wire [CQ_W-1:0]     ovf_cqn,

    output wire                irq_valid,
    input  wire                irq_ready,
    output wire [VEC_W-1:0]    irq_vector,

    output wire                cq_int_valid,
    output wire [VEC_W-1:0]    cq_int_vector,
    output wire                evq_int_valid,
    output wire                cq_lost,
    output wire                cq_ev_lost,
    output wire [31:0]         ev_lost_count
);

wire                   cq_rd_en, cq_rd_valid;
wire [CQ_W-1:0]        cq_rd_cqn;
wire [64+5+VEC_W-1:0]  cq_rd_ctx;
wire                   cq_cfg_valid, cq_cfg_create;
wire [CQ_W-1:0]        cq_cfg_cqn;
wire                   evr_valid, evr_set;
wire [63:0]            evr_ring;
wire [4:0]             evr_log2;
wire                   cq_ev_valid, cq_ev_ready;
wire [119:0]           cq_ev_entry;

/* verilator lint_off PINCONNECTEMPTY */
rnic_admin #(
    .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
    .SQ_LOG2(10), .RQ_LOG2(10), .CQ_LOG2(CQ_LOG2)
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
    .cq_rd_en(cq_rd_en), .cq_rd_cqn(cq_rd_cqn), .cq_rd_valid(cq_rd_valid), .cq_rd_ctx(cq_rd_ctx),
    .cq_cfg_valid(cq_cfg_valid), .cq_cfg_cqn(cq_cfg_cqn), .cq_cfg_create(cq_cfg_create),
    .evr_valid(evr_valid), .evr_set(evr_set), .evr_ring(evr_ring), .evr_log2(evr_log2),
    .evr_exc_ring(), .evr_exc_log2(), .evr_exc_buf_log2(),
    .win_wr_valid(), .win_wr_slot(), .win_wr_addr(), .win_wr_len()
);
/* verilator lint_on PINCONNECTEMPTY */

rnic_cq #(.DATA_W(DATA_W), .CQ_W(CQ_W), .VEC_W(VEC_W)) cq (
    .clk(clk), .rst(rst),
    .cq_valid(cpl_valid), .cq_ready(cpl_ready), .cq_cqn(cpl_cqn), .cq_entry(cpl_entry),
    .cqdb_valid(cqdb_valid), .cqdb_cqn(cqdb_cqn), .cqdb_value(cqdb_value),
    .cq_cfg_valid(cq_cfg_valid), .cq_cfg_cqn(cq_cfg_cqn), .cq_cfg_create(cq_cfg_create),
    .cq_rd_en(cq_rd_en), .cq_rd_cqn(cq_rd_cqn), .cq_rd_valid(cq_rd_valid), .cq_rd_ctx(cq_rd_ctx),
    .wr_req_valid(cqwr_valid), .wr_req_ready(cqwr_ready), .wr_req_addr(cqwr_addr), .wr_req_len(cqwr_len),
    .wr_req_what(cqwr_what),
    .wr_valid(cqwd_valid), .wr_ready(cqwd_ready), .wr_data(cqwd_data), .wr_keep(cqwd_keep), .wr_last(cqwd_last),
    .wr_done_valid(cqwb_valid), .wr_done_ready(cqwb_ready), .wr_done_err(cqwb_err),
    .ev_valid(cq_ev_valid), .ev_ready(cq_ev_ready), .ev_entry(cq_ev_entry),
    .cq_ovf_valid(ovf_valid), .cq_ovf_ready(ovf_ready), .cq_ovf_cqn(ovf_cqn),
    .int_valid(cq_int_valid), .int_vector(cq_int_vector), .lost(cq_lost), .ev_lost(cq_ev_lost)
);

wire [1:0] ev_ready;
rnic_evq #(.DATA_W(DATA_W), .N_SRC(2)) evq (
    .clk(clk), .rst(rst),
    .ev_valid({xev_valid, cq_ev_valid}), .ev_ready(ev_ready), .ev_entry({xev_entry, cq_ev_entry}),
    .evr_valid(evr_valid), .evr_set(evr_set), .evr_ring(evr_ring), .evr_log2(evr_log2),
    .wr_req_valid(evwr_valid), .wr_req_ready(evwr_ready), .wr_req_addr(evwr_addr), .wr_req_len(evwr_len),
    .wr_req_what(evwr_what),
    .wr_valid(evwd_valid), .wr_ready(evwd_ready), .wr_data(evwd_data), .wr_keep(evwd_keep), .wr_last(evwd_last),
    .wr_done_valid(evwb_valid), .wr_done_ready(evwb_ready), .wr_done_err(evwb_err),
    .int_valid(evq_int_valid), .lost_count(ev_lost_count)
);
assign cq_ev_ready = ev_ready[0];
assign xev_ready = ev_ready[1];

rnic_irq #(.VEC_W(VEC_W), .N_SRC(2)) irq (
    .clk(clk), .rst(rst),
    .vec_req(vec_req), .vec_addr(vec_addr), .vec_req_is_wr(vec_req_is_wr), .vec_wr_data(vec_wr_data),
    .vec_wr_biten(vec_wr_biten), .vec_rd_ack(vec_rd_ack), .vec_rd_data(vec_rd_data), .vec_wr_ack(vec_wr_ack),
    .int_valid({evq_int_valid, cq_int_valid}), .int_vector({{VEC_W{1'b0}}, cq_int_vector}),
    .irq_valid(irq_valid), .irq_ready(irq_ready), .irq_vector(irq_vector)
);

endmodule

`resetall
