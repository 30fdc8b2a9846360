// Test-only top for tests/rresp: rnic_admin (programmed through its command
// port as the driver programs the mailbox), rnic_rresp (on rnic_admin's MR
// read port, granted when the bench's `stall` input is low, as the lead's
// arbiter may refuse it any number of clocks) and rnic_tx (configured from
// each QP_RTS pulse: marker position, markers and CRC of the transmit
// half, as tests/sq/sq_top.v). The Read Requests, posts, the DMA read port,
// the failure reports and rnic_tx's FPDU stream are the bench's.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rr_top #(
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
    input  wire                stall,
    input  wire                rreq_valid,
    output wire                rreq_ready,
    input  wire [CONN_W-1:0]   rreq_conn,
    input  wire [223:0]        rreq_rr,
    output wire                post_valid,
    input  wire                post_ready,
    output wire [CONN_W-1:0]   post_conn,
    output wire [1:0]          post_qn,
    output wire [63:0]         post_addr,
    output wire [31:0]         post_len,
    output wire [63:0]         post_id,
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
    output wire                fail_valid,
    input  wire                fail_ready,
    output wire [CONN_W-1:0]   fail_qpn,
    output wire                fail_local,
    output wire [7:0]          fail_layer_etype,
    output wire [7:0]          fail_code,
    output wire [DATA_W-1:0]   m_axis_tdata,
    output wire [DATA_W/8-1:0] m_axis_tkeep,
    output wire                m_axis_tvalid,
    input  wire                m_axis_tready,
    output wire                m_axis_tlast,
    output wire [CONN_W-1:0]   m_axis_tuser,
    output wire                ddp_err_valid,
    output wire                mpa_err_valid,
    output wire [(1<<CONN_W)-1:0] rx_hold
);

wire               qp_rts_valid, qp_state_wr_valid, mr_rd_req, mr_rd_valid;
wire [CONN_W-1:0]  qp_rts_qpn, qp_state_wr_qpn;
wire [227:0]       qp_rts_params;
wire [1:0]         qp_state_wr_state;
wire [15:0]        qp_state_wr_pd;
wire [STAG_AW-1:0] mr_rd_index;
wire [235:0]       mr_rd_entry;
wire               mr_rd_gnt = mr_rd_req && !stall;

/* verilator lint_off PINCONNECTEMPTY */
rnic_admin #(.CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
             .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2)) u_admin (
    .ci_qpn(), .sq_ci(16'd0), .rq_ci(16'd0), .clk(clk), .rst(rst), .cmd_wr(cmd_wr), .cmd_op(cmd_op), .cmd_args(cmd_args), .busy(busy),
    .status_code(status_code), .last_op(), .out_args(), .out_args_we(), .overrun(),
    .mr_wr_valid(), .mr_wr_index(), .mr_wr_key(), .mr_wr_access(), .mr_wr_pd(), .mr_wr_bound(),
    .mr_wr_base_to(), .mr_wr_len(), .mr_wr_addr(), .mr_inv_valid(), .mr_inv_index(), .dp_inv_valid(1'b0), .dp_inv_index({STAG_AW{1'b0}}),
    .mr_rd_en(mr_rd_gnt), .mr_rd_index(mr_rd_index), .mr_rd_valid(mr_rd_valid), .mr_rd_entry(mr_rd_entry),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state),
    .qp_state_wr_pd(qp_state_wr_pd),
    .qp_rd_en(1'b0), .qp_rd_qpn({CONN_W{1'b0}}), .qp_rd_state(), .qp_rd_ctx(),
    .rts_rd_en(1'b0), .rts_rd_qpn({CONN_W{1'b0}}), .rts_rd_params(),
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

rnic_rresp #(.DATA_W(DATA_W), .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
             .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2), .POST_DEPTH_LOG2(POST_DEPTH_LOG2)) u_rr (
    .clk(clk), .rst(rst),
    .qp_state_wr_valid(qp_state_wr_valid), .qp_state_wr_qpn(qp_state_wr_qpn), .qp_state_wr_state(qp_state_wr_state),
    .qp_state_wr_pd(qp_state_wr_pd),
    .qp_rts_valid(qp_rts_valid), .qp_rts_qpn(qp_rts_qpn), .qp_rts_params(qp_rts_params),
    .mr_rd_req(mr_rd_req), .mr_rd_gnt(mr_rd_gnt), .mr_rd_index(mr_rd_index), .mr_rd_valid(mr_rd_valid),
    .mr_rd_entry(mr_rd_entry),
    .rreq_valid(rreq_valid), .rreq_ready(rreq_ready), .rreq_conn(rreq_conn), .rreq_rr(rreq_rr), .rreq_msn(32'd1),
    .post_valid(post_valid), .post_ready(post_ready), .post_conn(post_conn), .post_qn(post_qn),
    .post_addr(post_addr), .post_len(post_len), .post_id(post_id),
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
    .fail_valid(fail_valid), .fail_ready(fail_ready), .fail_qpn(fail_qpn), .fail_local(fail_local),
    .fail_layer_etype(fail_layer_etype), .fail_code(fail_code), .fail_hdrct(), .fail_seglen(), .fail_ddp_hdr(),
    .fail_rdma_hdr(), .rx_hold(rx_hold));

// rnic_tx's connection configuration from the QP_RTS pulse (as sq_top):
// marker position ((TX seq - TX marker base) mod 512) / 4, markers and CRC
// of the transmit half (flags bits 0 and 2).
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
