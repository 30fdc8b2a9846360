// Test-only top for tests/rq: rnic_admin (programmed through its command
// port as the driver programs the mailbox) and rnic_rq, which reads
// rnic_admin's QP context and MR ports through the shared-port handshake
// (brief-dev-ifaces2.md): gnt = req && !stall, the stalls top inputs the
// bench toggles at random. The DMA read port, posts, completions, QP
// failure and error pulses, completion and event records are the bench's.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rq_top #(
    parameter DATA_W  = 64,
    parameter CONN_W  = 2,
    parameter STAG_AW = 3,
    parameter CQ_W    = 2,
    parameter VEC_W   = 1,
    parameter WIN_W   = 1,
    parameter SQ_LOG2 = 8,
    parameter RQ_LOG2 = 8,
    parameter CQ_LOG2 = 8,
    parameter POST_DEPTH_LOG2 = 4
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                cmd_wr,
    input  wire [7:0]          cmd_op,
    input  wire [255:0]        cmd_args,
    output wire                busy,
    output wire [7:0]          status_code,
    input  wire                qp_stall,
    input  wire                mr_stall,
    input  wire                rqdb_valid,
    input  wire [11:0]         rqdb_qpn,
    input  wire [31:0]         rqdb_value,
    output wire                dropped_db,
    output wire                wqe_rd_req_valid,
    input  wire                wqe_rd_req_ready,
    output wire [63:0]         wqe_rd_req_addr,
    output wire [31:0]         wqe_rd_req_len,
    output wire [2:0]          wqe_rd_req_what,
    input  wire                wqe_rd_valid,
    output wire                wqe_rd_ready,
    input  wire [DATA_W-1:0]   wqe_rd_data,
    input  wire [DATA_W/8-1:0] wqe_rd_keep,
    input  wire                wqe_rd_last,
    input  wire                wqe_rd_err,
    output wire                post_valid,
    input  wire                post_ready,
    output wire [CONN_W-1:0]   post_conn,
    output wire [1:0]          post_qn,
    output wire [63:0]         post_addr,
    output wire [31:0]         post_len,
    output wire [63:0]         post_id,
    input  wire                rcpl_valid,
    output wire                rcpl_ready,
    input  wire [CONN_W-1:0]   rcpl_conn,
    input  wire [3:0]          rcpl_opcode,
    input  wire [31:0]         rcpl_msn,
    input  wire [31:0]         rcpl_len,
    input  wire [63:0]         rcpl_id,
    input  wire [31:0]         rcpl_inv_stag,
    output wire                inv_valid,
    output wire [STAG_AW-1:0]  inv_index,
    output wire                fail_valid,
    input  wire                fail_ready,
    output wire [CONN_W-1:0]   fail_qpn,
    output wire                fail_local,
    output wire [7:0]          fail_layer_etype,
    output wire [7:0]          fail_code,
    input  wire                qerr_valid,
    input  wire [CONN_W-1:0]   qerr_qpn,
    input  wire [7:0]          qerr_status,
    input  wire [7:0]          qerr_layer_etype,
    input  wire [7:0]          qerr_code,
    output wire                cq_valid,
    input  wire                cq_ready,
    output wire [CQ_W-1:0]     cq_cqn,
    output wire [247:0]        cq_entry,
    output wire                ev_valid,
    input  wire                ev_ready,
    output wire [119:0]        ev_entry,
    output wire [(1<<CONN_W)-1:0] rx_hold
);
localparam QP_CTX_W = 16 + 64 + 64 + 5 + 5 + 2 * CQ_W;

wire               qp_rts_valid, qp_state_wr_valid, qp_rd_req, qp_rd_gnt, mr_rd_req, mr_rd_gnt, mr_rd_valid;
wire [CONN_W-1:0]  qp_rts_qpn, qp_state_wr_qpn, qp_rd_qpn;
wire [227:0]       qp_rts_params;
wire               win_wr_valid;            // rnic_admin's DMA windows, to rnic_rq's check
wire [WIN_W-1:0]   win_wr_slot;
wire [63:0]        win_wr_addr, win_wr_len;
wire [1:0]         qp_state_wr_state, qp_rd_state;
wire [QP_CTX_W-1:0] qp_rd_ctx;
wire [STAG_AW-1:0] mr_rd_index;
wire [235:0]       mr_rd_entry;

assign qp_rd_gnt = qp_rd_req && !qp_stall;
assign mr_rd_gnt = mr_rd_req && !mr_stall;

/* verilator lint_off PINCONNECTEMPTY */
// QP_DRAIN's output words: the engine's consumer index of the command's QP.
wire [CONN_W-1:0]  ci_qpn;
wire [15:0]        rq_ci;
rnic_admin #(.CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
             .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2)) u_admin (
    .ci_qpn(ci_qpn), .sq_ci(16'd0), .rq_ci(rq_ci), .clk(clk), .rst(rst), .cmd_wr(cmd_wr), .cmd_op(cmd_op), .cmd_args(cmd_args), .busy(busy),
    .status_code(status_code), .last_op(), .out_args(), .out_args_we(), .overrun(),
    .mr_wr_valid(), .mr_wr_index(), .mr_wr_key(), .mr_wr_access(), .mr_wr_pd(), .mr_wr_bound(),
    .mr_wr_base_to(), .mr_wr_len(), .mr_wr_addr(), .mr_inv_valid(), .mr_inv_index(),
    // A Send with Invalidate clears the MR's valid bit, as in rnic_dev.
    .dp_inv_valid(inv_valid), .dp_inv_index(inv_index),
    .mr_rd_en(mr_rd_gnt), .mr_rd_index(mr_rd_index), .mr_rd_valid(mr_rd_valid), .mr_rd_entry(mr_rd_entry),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state), .qp_state_wr_pd(),
    .qp_rd_en(qp_rd_gnt), .qp_rd_qpn(qp_rd_qpn), .qp_rd_state(qp_rd_state), .qp_rd_ctx(qp_rd_ctx),
    .rts_rd_en(1'b0), .rts_rd_qpn({CONN_W{1'b0}}), .rts_rd_params(),
    .cq_rd_en(1'b0), .cq_rd_cqn({CQ_W{1'b0}}), .cq_rd_valid(), .cq_rd_ctx(),
    .cq_cfg_valid(), .cq_cfg_cqn(), .cq_cfg_create(),
    .evr_valid(), .evr_set(), .evr_ring(), .evr_log2(), .evr_exc_ring(), .evr_exc_log2(), .evr_exc_buf_log2(),
    .win_wr_valid(win_wr_valid), .win_wr_slot(win_wr_slot), .win_wr_addr(win_wr_addr), .win_wr_len(win_wr_len));
/* verilator lint_on PINCONNECTEMPTY */

rnic_rq #(.DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
          .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2), .POST_DEPTH_LOG2(POST_DEPTH_LOG2)) u_rq (
    .ci_rd_qpn(ci_qpn), .ci_rd_value(rq_ci), .rx_hold(rx_hold), .clk(clk), .rst(rst),
    .rqdb_valid(rqdb_valid), .rqdb_qpn(rqdb_qpn), .rqdb_value(rqdb_value), .dropped_db(dropped_db),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .win_wr_valid(win_wr_valid), .win_wr_slot(win_wr_slot), .win_wr_addr(win_wr_addr), .win_wr_len(win_wr_len),
    .qp_rd_req(qp_rd_req), .qp_rd_gnt(qp_rd_gnt), .qp_rd_qpn(qp_rd_qpn), .qp_rd_state(qp_rd_state),
    .qp_rd_ctx(qp_rd_ctx),
    .mr_rd_req(mr_rd_req), .mr_rd_gnt(mr_rd_gnt), .mr_rd_index(mr_rd_index), .mr_rd_valid(mr_rd_valid),
    .mr_rd_entry(mr_rd_entry),
    .wqe_rd_req_valid(wqe_rd_req_valid), .wqe_rd_req_ready(wqe_rd_req_ready), .wqe_rd_req_addr(wqe_rd_req_addr),
    .wqe_rd_req_len(wqe_rd_req_len), .wqe_rd_req_what(wqe_rd_req_what), .wqe_rd_valid(wqe_rd_valid),
    .wqe_rd_ready(wqe_rd_ready), .wqe_rd_data(wqe_rd_data), .wqe_rd_keep(wqe_rd_keep), .wqe_rd_last(wqe_rd_last),
    .wqe_rd_err(wqe_rd_err),
    .post_valid(post_valid), .post_ready(post_ready), .post_conn(post_conn), .post_qn(post_qn),
    .post_addr(post_addr), .post_len(post_len), .post_id(post_id),
    .rcpl_valid(rcpl_valid), .rcpl_ready(rcpl_ready), .rcpl_conn(rcpl_conn), .rcpl_opcode(rcpl_opcode),
    .rcpl_msn(rcpl_msn), .rcpl_len(rcpl_len), .rcpl_id(rcpl_id), .rcpl_inv_stag(rcpl_inv_stag),
    .inv_valid(inv_valid), .inv_index(inv_index),
    .fail_valid(fail_valid), .fail_ready(fail_ready), .fail_qpn(fail_qpn), .fail_local(fail_local),
    .fail_layer_etype(fail_layer_etype), .fail_code(fail_code),
    .qerr_valid(qerr_valid), .qerr_qpn(qerr_qpn), .qerr_status(qerr_status),
    .qerr_layer_etype(qerr_layer_etype), .qerr_code(qerr_code),
    .cq_valid(cq_valid), .cq_ready(cq_ready), .cq_cqn(cq_cqn), .cq_entry(cq_entry),
    .ev_valid(ev_valid), .ev_ready(ev_ready), .ev_entry(ev_entry));
endmodule
`resetall
