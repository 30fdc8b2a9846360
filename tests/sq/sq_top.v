// Test-only top for tests/sq: rnic_admin (programmed through its command
// port as the driver programs the mailbox), rnic_sq (owning rnic_admin's
// read ports) and rnic_tx (configured from each QP_RTS pulse: marker
// position, markers and CRC of the transmit half). The DMA read ports,
// completion and event records and rnic_tx's FPDU stream are the bench's.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module sq_top #(
    parameter DATA_W  = 64,
    parameter CONN_W  = 2,
    parameter STAG_AW = 3,
    parameter CQ_W    = 2,
    parameter VEC_W   = 1,
    parameter WIN_W   = 1,
    parameter SQ_LOG2 = 8,
    parameter RQ_LOG2 = 8,
    parameter CQ_LOG2 = 8,
    parameter PEND_LOG2 = 3
) (
    input  wire                clk,
    input  wire                rst,
    input  wire                cmd_wr,
    input  wire [7:0]          cmd_op,
    input  wire [255:0]        cmd_args,
    output wire                busy,
    output wire [7:0]          status_code,
    input  wire                sqdb_valid,
    input  wire [11:0]         sqdb_qpn,
    input  wire [31:0]         sqdb_value,
    input  wire                rr_done_valid,
    output wire                rr_done_ready,
    input  wire [CONN_W-1:0]   rr_done_qpn,
    input  wire [7:0]          rr_done_status,
    input  wire [7:0]          rr_done_layer_etype,
    input  wire [7:0]          rr_done_code,
    input  wire                xfail_valid,
    input  wire [CONN_W-1:0]   xfail_qpn,
    output wire                qerr_valid,
    output wire [CONN_W-1:0]   qerr_qpn,
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
    output wire                pay_rd_req_valid,
    input  wire                pay_rd_req_ready,
    output wire [63:0]         pay_rd_req_addr,
    output wire [31:0]         pay_rd_req_len,
    output wire [2:0]          pay_rd_req_what,
    input  wire                pay_rd_valid,
    output wire                pay_rd_ready,
    input  wire [DATA_W-1:0]   pay_rd_data,
    input  wire [DATA_W/8-1:0] pay_rd_keep,
    input  wire                pay_rd_last,
    input  wire                pay_rd_err,
    output wire [DATA_W-1:0]   m_axis_tdata,
    output wire [DATA_W/8-1:0] m_axis_tkeep,
    output wire                m_axis_tvalid,
    input  wire                m_axis_tready,
    output wire                m_axis_tlast,
    output wire [CONN_W-1:0]   m_axis_tuser,
    output wire                ddp_err_valid,
    output wire                mpa_err_valid,
    output wire                cq_valid,
    input  wire                cq_ready,
    output wire [CQ_W-1:0]     cq_cqn,
    output wire [247:0]        cq_entry,
    output wire                ev_valid,
    input  wire                ev_ready,
    output wire [119:0]        ev_entry,
    output wire                dropped_ev
);
localparam QP_CTX_W = 16 + 64 + 64 + 5 + 5 + 2 * CQ_W;

wire               qp_rts_valid, qp_state_wr_valid, qp_rd_en, rts_rd_en, mr_rd_en, mr_rd_valid;
wire [CONN_W-1:0]  qp_rts_qpn, qp_state_wr_qpn, qp_rd_qpn, rts_rd_qpn;
// QP_DRAIN's output words: the engine's consumer index of the command's QP.
wire [CONN_W-1:0]  ci_qpn;
wire [15:0]        sq_ci;
wire [227:0]       qp_rts_params, rts_rd_params;
wire [1:0]         qp_state_wr_state, qp_rd_state;
wire [QP_CTX_W-1:0] qp_rd_ctx;
wire [STAG_AW-1:0] mr_rd_index;
wire [235:0]       mr_rd_entry;

/* verilator lint_off PINCONNECTEMPTY */
rnic_admin #(.CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
             .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2)) u_admin (
    .ci_qpn(ci_qpn), .sq_ci(sq_ci), .rq_ci(16'd0), .clk(clk), .rst(rst), .cmd_wr(cmd_wr), .cmd_op(cmd_op), .cmd_args(cmd_args), .busy(busy),
    .status_code(status_code), .last_op(), .out_args(), .out_args_we(), .overrun(),
    .mr_wr_valid(), .mr_wr_index(), .mr_wr_key(), .mr_wr_access(), .mr_wr_pd(), .mr_wr_bound(),
    .mr_wr_base_to(), .mr_wr_len(), .mr_wr_addr(), .mr_inv_valid(), .mr_inv_index(),
    .dp_inv_valid(1'b0), .dp_inv_index({STAG_AW{1'b0}}),
    .mr_rd_en(mr_rd_en), .mr_rd_index(mr_rd_index), .mr_rd_valid(mr_rd_valid), .mr_rd_entry(mr_rd_entry),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state), .qp_state_wr_pd(),
    .qp_rd_en(qp_rd_en), .qp_rd_qpn(qp_rd_qpn), .qp_rd_state(qp_rd_state), .qp_rd_ctx(qp_rd_ctx),
    .rts_rd_en(rts_rd_en), .rts_rd_qpn(rts_rd_qpn), .rts_rd_params(rts_rd_params),
    .cq_rd_en(1'b0), .cq_rd_cqn({CQ_W{1'b0}}), .cq_rd_valid(), .cq_rd_ctx(),
    .cq_cfg_valid(), .cq_cfg_cqn(), .cq_cfg_create(),
    .evr_valid(), .evr_set(), .evr_ring(), .evr_log2(), .evr_exc_ring(), .evr_exc_log2(), .evr_exc_buf_log2(),
    .win_wr_valid(), .win_wr_slot(), .win_wr_addr(), .win_wr_len());

wire              desc_valid, desc_ready, tx_tvalid, tx_tready, tx_tlast;
wire [3:0]        desc_opcode;
wire [31:0]       desc_stag, desc_msn, desc_inv, desc_len, desc_rr_sink_stag, desc_rr_size, desc_rr_src_stag;
wire [63:0]       desc_to, desc_rr_sink_to, desc_rr_src_to;
wire [15:0]       desc_mulpdu;
wire [CONN_W-1:0] desc_conn;
wire [DATA_W-1:0] tx_tdata;
wire [DATA_W/8-1:0] tx_tkeep;

rnic_sq #(.DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
          .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2), .PEND_LOG2(PEND_LOG2)) u_sq (
    .ci_rd_qpn(ci_qpn), .ci_rd_value(sq_ci), .clk(clk), .rst(rst),
    .sqdb_valid(sqdb_valid), .sqdb_qpn(sqdb_qpn), .sqdb_value(sqdb_value),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .qp_rd_en(qp_rd_en), .qp_rd_qpn(qp_rd_qpn), .qp_rd_state(qp_rd_state), .qp_rd_ctx(qp_rd_ctx),
    .rts_rd_en(rts_rd_en), .rts_rd_qpn(rts_rd_qpn), .rts_rd_params(rts_rd_params),
    .mr_rd_en(mr_rd_en), .mr_rd_index(mr_rd_index), .mr_rd_valid(mr_rd_valid), .mr_rd_entry(mr_rd_entry),
    .rr_done_valid(rr_done_valid), .rr_done_ready(rr_done_ready), .rr_done_qpn(rr_done_qpn),
    .rr_done_status(rr_done_status), .rr_done_layer_etype(rr_done_layer_etype), .rr_done_code(rr_done_code),
    .xfail_valid(xfail_valid), .xfail_qpn(xfail_qpn), .xfail_kind(2'd0), .xfail_status(8'd0), .xfail_target(2'd0),
    .xfail_layer_etype(8'd0), .xfail_code(8'd0), .xfail_hdrct(3'd0), .xfail_seglen(16'd0), .xfail_ddp_hdr(144'd0),
    .xfail_rdma_hdr(224'd0),
    .qerr_valid(qerr_valid), .qerr_qpn(qerr_qpn), .qerr_status(), .qerr_layer_etype(), .qerr_code(),
    .wqe_rd_req_valid(wqe_rd_req_valid), .wqe_rd_req_ready(wqe_rd_req_ready), .wqe_rd_req_addr(wqe_rd_req_addr),
    .wqe_rd_req_len(wqe_rd_req_len), .wqe_rd_req_what(wqe_rd_req_what), .wqe_rd_valid(wqe_rd_valid),
    .wqe_rd_ready(wqe_rd_ready), .wqe_rd_data(wqe_rd_data), .wqe_rd_keep(wqe_rd_keep), .wqe_rd_last(wqe_rd_last),
    .wqe_rd_err(wqe_rd_err),
    .pay_rd_req_valid(pay_rd_req_valid), .pay_rd_req_ready(pay_rd_req_ready), .pay_rd_req_addr(pay_rd_req_addr),
    .pay_rd_req_len(pay_rd_req_len), .pay_rd_req_what(pay_rd_req_what), .pay_rd_valid(pay_rd_valid),
    .pay_rd_ready(pay_rd_ready), .pay_rd_data(pay_rd_data), .pay_rd_keep(pay_rd_keep), .pay_rd_last(pay_rd_last),
    .pay_rd_err(pay_rd_err),
    .tx_desc_valid(desc_valid), .tx_desc_ready(desc_ready), .tx_desc_opcode(desc_opcode), .tx_desc_stag(desc_stag),
    .tx_desc_to(desc_to), .tx_desc_msn(desc_msn), .tx_desc_inv_stag(desc_inv), .tx_desc_len(desc_len),
    .tx_desc_rr_sink_stag(desc_rr_sink_stag), .tx_desc_rr_sink_to(desc_rr_sink_to), .tx_desc_rr_size(desc_rr_size),
    .tx_desc_rr_src_stag(desc_rr_src_stag), .tx_desc_rr_src_to(desc_rr_src_to), .tx_desc_mulpdu(desc_mulpdu),
    .tx_desc_conn(desc_conn),
    .tx_axis_tdata(tx_tdata), .tx_axis_tkeep(tx_tkeep), .tx_axis_tvalid(tx_tvalid), .tx_axis_tready(tx_tready),
    .tx_axis_tlast(tx_tlast),
    .cq_valid(cq_valid), .cq_ready(cq_ready), .cq_cqn(cq_cqn), .cq_entry(cq_entry),
    .ev_valid(ev_valid), .ev_ready(ev_ready), .ev_entry(ev_entry), .dropped_ev(dropped_ev));

// rnic_tx's connection configuration from the QP_RTS pulse: marker
// position ((TX seq - TX marker base) mod 512) / 4, markers and CRC of the
// transmit half (flags bits 0 and 2).
reg              cfg_v;
reg [CONN_W-1:0] cfg_conn;
reg [6:0]        cfg_pos;
reg              cfg_mrk, cfg_crc;
wire             cfg_ready;
wire [31:0]      rts_off = qp_rts_params[127:96] - qp_rts_params[191:160];
always @(posedge clk) begin
    if (qp_rts_valid) begin
        cfg_v <= 1'b1;
        cfg_conn <= qp_rts_qpn;
        cfg_pos <= rts_off[8:2];
        cfg_mrk <= qp_rts_params[192];
        cfg_crc <= qp_rts_params[194];
    end else if (cfg_ready) begin
        cfg_v <= 1'b0;
    end
    if (rst) cfg_v <= 1'b0;
end

rnic_tx #(.DATA_W(DATA_W), .CONN_W(CONN_W)) u_tx (
    .clk(clk), .rst(rst),
    .s_desc_valid(desc_valid), .s_desc_ready(desc_ready), .s_desc_opcode(desc_opcode), .s_desc_stag(desc_stag),
    .s_desc_to(desc_to), .s_desc_msn(desc_msn), .s_desc_inv_stag(desc_inv), .s_desc_len(desc_len),
    .s_desc_rr_sink_stag(desc_rr_sink_stag), .s_desc_rr_sink_to(desc_rr_sink_to), .s_desc_rr_size(desc_rr_size),
    .s_desc_rr_src_stag(desc_rr_src_stag), .s_desc_rr_src_to(desc_rr_src_to), .s_desc_mulpdu(desc_mulpdu),
    .s_desc_conn(desc_conn),
    .s_axis_tdata(tx_tdata), .s_axis_tkeep(tx_tkeep), .s_axis_tvalid(tx_tvalid), .s_axis_tready(tx_tready),
    .s_axis_tlast(tx_tlast),
    .cfg_valid(cfg_v), .cfg_ready(cfg_ready), .cfg_conn(cfg_conn), .cfg_pos(cfg_pos), .cfg_mrk_en(cfg_mrk),
    .cfg_crc_en(cfg_crc), .cfg_tuf(1'b0), .cfg_key(48'd0),  // MPA connections only here
    .m_axis_tdata(m_axis_tdata), .m_axis_tkeep(m_axis_tkeep), .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tready(m_axis_tready), .m_axis_tlast(m_axis_tlast), .m_axis_tuser(m_axis_tuser),
    .ddp_err_valid(ddp_err_valid), .ddp_err_code(), .ddp_err_conn(),
    .mpa_err_valid(mpa_err_valid), .mpa_err_code(), .tuf_err_valid(), .tuf_err_code());
/* verilator lint_on PINCONNECTEMPTY */
endmodule
`resetall
