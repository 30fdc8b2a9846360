// rnic_dev: the RNIC as a device, the top that a PCIe bridge (on a board)
// or the simulated host (hw/sim) drives. docs/device.md is its contract
// with the driver.
//
// Ports: the BAR (s_axil), DMA (m_axi, AXI4 master), the network seam
// (s_net in, m_net out), interrupt messages (m_irq) and idle (for the
// simulated host's clock). Today: the BAR and the admin commands. s_axil is the BAR (AXI4-Lite,
// 32-bit data, 128 KiB) and reaches the generated register block
// (rnic_regs, from hw/regs/rnic.rdl): the chain of blocks, the ID block
// with this build's parameters, the counters, the admin mailbox's
// registers, and the external regions the device answers itself (the
// mailbox's CMD, the interrupt vectors, the doorbells). A CMD write starts
// the command in rnic_admin (the executor: its tables of CQs, QPs, MRs,
// DMA windows and the event ring configuration); STATUS.BUSY is set until
// it answers with STATUS.CODE and, for QP_DRAIN, the output ARG words; a
// CMD write while BUSY is ignored and counted in admin_overrun. CMD reads
// back the opcode of the last command accepted. Not yet: the datapath
// (rnic_tx, rnic_rx), rings, DMA and interrupts (issue 30, item 2). Until
// they come:
//   - rnic_admin's outputs toward the datapath (MR write and invalidate
//     events, QP_RTS parameters, QP state changes, the tables' read ports,
//     the event ring configuration) are left unconnected;
//   - the vectors' registers read 0 and ignore writes; doorbells are taken
//     and ignored (they read 0, as the contract says);
//   - every counter but admin_overrun reads 0.
//
// Parameters are the build's: they size the device and are published in
// the ID block, so that the driver sizes itself from the device it finds.
//   DATA_W      datapath width in bits (64, 128, 256, 512)
//   CONN_W      log2 of the connections (queue pairs), at most 12
//   STAG_AW     log2 of the MR table's entries
//   CQ_W        log2 of the completion queues, at most 12
//   VEC_W       log2 of the interrupt vectors, at most 4
//   WIN_W       log2 of the DMA window slots
//   SQ_LOG2, RQ_LOG2, CQ_LOG2   log2 of the largest ring of each kind
//   BUILD_HASH  the build's identity (the first 32 bits of the commit)
//
// Reset: rst is synchronous, active high, and clears every register.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_dev #(
    parameter DATA_W     = 64,
    parameter CONN_W     = 6,
    parameter STAG_AW    = 10,
    parameter SQ_LOG2    = 10,
    parameter RQ_LOG2    = 10,
    parameter CQ_LOG2    = 12,
    parameter CQ_W       = 6,
    parameter VEC_W      = 2,
    parameter WIN_W      = 4,
    parameter BUILD_HASH = 32'h0,
    parameter BAR_AW     = 17,
    parameter AXI_ID_W   = 4
) (
    input  wire              clk,
    input  wire              rst,

    input  wire              s_axil_awvalid,
    output wire              s_axil_awready,
    input  wire [BAR_AW-1:0] s_axil_awaddr,
    input  wire [2:0]        s_axil_awprot,
    input  wire              s_axil_wvalid,
    output wire              s_axil_wready,
    input  wire [31:0]       s_axil_wdata,
    input  wire [3:0]        s_axil_wstrb,
    output wire              s_axil_bvalid,
    input  wire              s_axil_bready,
    output wire [1:0]        s_axil_bresp,
    input  wire              s_axil_arvalid,
    output wire              s_axil_arready,
    input  wire [BAR_AW-1:0] s_axil_araddr,
    input  wire [2:0]        s_axil_arprot,
    output wire              s_axil_rvalid,
    input  wire              s_axil_rready,
    output wire [31:0]       s_axil_rdata,
    output wire [1:0]        s_axil_rresp,

    // DMA: AXI4 master to host memory (INCR bursts, never across 4 KiB).
    output wire [AXI_ID_W-1:0] m_axi_awid,
    output wire [63:0]         m_axi_awaddr,
    output wire [7:0]          m_axi_awlen,
    output wire [2:0]          m_axi_awsize,
    output wire [1:0]          m_axi_awburst,
    output wire                m_axi_awvalid,
    input  wire                m_axi_awready,
    output wire [DATA_W-1:0]   m_axi_wdata,
    output wire [DATA_W/8-1:0] m_axi_wstrb,
    output wire                m_axi_wlast,
    output wire                m_axi_wvalid,
    input  wire                m_axi_wready,
    input  wire [AXI_ID_W-1:0] m_axi_bid,
    input  wire [1:0]          m_axi_bresp,
    input  wire                m_axi_bvalid,
    output wire                m_axi_bready,
    output wire [AXI_ID_W-1:0] m_axi_arid,
    output wire [63:0]         m_axi_araddr,
    output wire [7:0]          m_axi_arlen,
    output wire [2:0]          m_axi_arsize,
    output wire [1:0]          m_axi_arburst,
    output wire                m_axi_arvalid,
    input  wire                m_axi_arready,
    input  wire [AXI_ID_W-1:0] m_axi_rid,
    input  wire [DATA_W-1:0]   m_axi_rdata,
    input  wire [1:0]          m_axi_rresp,
    input  wire                m_axi_rlast,
    input  wire                m_axi_rvalid,
    output wire                m_axi_rready,

    // The network seam (docs/device.md, "Shape"): TCP segments of the
    // offloaded connections, one frame a segment, lane-0 aligned, tuser =
    // {qpn[15:0], seq[31:0], len[15:0]} on every beat. In: what the host
    // (or a board's MAC and classifier) received; out: what the device
    // sends.
    input  wire [DATA_W-1:0]   s_net_tdata,
    input  wire [DATA_W/8-1:0] s_net_tkeep,
    input  wire                s_net_tvalid,
    output wire                s_net_tready,
    input  wire                s_net_tlast,
    input  wire [63:0]         s_net_tuser,
    output wire [DATA_W-1:0]   m_net_tdata,
    output wire [DATA_W/8-1:0] m_net_tkeep,
    output wire                m_net_tvalid,
    input  wire                m_net_tready,
    output wire                m_net_tlast,
    output wire [63:0]         m_net_tuser,

    // Interrupts: one message a vector fire (MSI-X style; the simulated
    // host sends it to the driver as IRQ).
    output wire                m_irq_valid,
    input  wire                m_irq_ready,
    output wire [3:0]          m_irq_vector,

    // High when the device has nothing in progress and nothing due (no
    // command, transfer or timer): the simulated host stops the clock
    // then until the driver asks for something.
    output wire                idle
);
initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("rnic_dev: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
    if (BAR_AW != 17) begin
        $error("rnic_dev: BAR_AW must be the register block's address width, 17, got %0d", BAR_AW);
        $finish;
    end
    if (CONN_W < 1 || CONN_W > 12 || CQ_W < 1 || CQ_W > 12 || VEC_W > 4) begin
        $error("rnic_dev: CONN_W and CQ_W must be 1 to 12 and VEC_W at most 4 (the doorbell and vector blocks' room), got %0d, %0d, %0d",
               CONN_W, CQ_W, VEC_W);
        $finish;
    end
end

localparam [31:0] CONNS   = 32'd1 << CONN_W;
localparam [31:0] STAGS   = 32'd1 << STAG_AW;
localparam [31:0] CQS     = 32'd1 << CQ_W;
localparam [31:0] VECTORS = 32'd1 << VEC_W;
localparam [31:0] WINDOWS = 32'd1 << WIN_W;
// The mailbox's CMD register: a write is a command for rnic_admin.
wire         cmd_req, cmd_is_wr;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0]  cmd_wr_data, cmd_wr_biten;   // the opcode is [7:0]
/* verilator lint_on UNUSEDSIGNAL */
wire [255:0] args_wr;                     // ARG0..ARG7 as the driver wrote them
wire         adm_busy, adm_out_we, adm_overrun;
wire [7:0]   adm_code, adm_last_op;
wire [255:0] adm_out;

rnic_admin #(
    .CONN_W(CONN_W), .STAG_AW(STAG_AW), .CQ_W(CQ_W), .VEC_W(VEC_W), .WIN_W(WIN_W),
    .SQ_LOG2(SQ_LOG2), .RQ_LOG2(RQ_LOG2), .CQ_LOG2(CQ_LOG2)
) admin (
    .clk(clk),
    .rst(rst),
    .cmd_wr(cmd_req && cmd_is_wr),
    .cmd_op(cmd_wr_data[7:0]),
    .cmd_args(args_wr),
    .busy(adm_busy),
    .status_code(adm_code),
    .last_op(adm_last_op),
    .out_args(adm_out),
    .out_args_we(adm_out_we),
    .overrun(adm_overrun),
    // Toward the datapath, which does not exist yet: left unconnected.
    /* verilator lint_off PINCONNECTEMPTY */
    .mr_wr_valid(), .mr_wr_index(), .mr_wr_key(), .mr_wr_access(), .mr_wr_pd(), .mr_wr_bound(),
    .mr_wr_base_to(), .mr_wr_len(), .mr_wr_addr(),
    .mr_inv_valid(), .mr_inv_index(),
    .mr_rd_en(1'b0), .mr_rd_index({STAG_AW{1'b0}}), .mr_rd_valid(), .mr_rd_entry(),
    .qp_rts_valid(), .qp_rts_qpn(), .qp_rts_params(),
    .qp_state_wr_valid(), .qp_state_wr_qpn(), .qp_state_wr_state(),
    .qp_rd_en(1'b0), .qp_rd_qpn({CONN_W{1'b0}}), .qp_rd_state(), .qp_rd_ctx(),
    .rts_rd_en(1'b0), .rts_rd_qpn({CONN_W{1'b0}}), .rts_rd_params(),
    .cq_rd_en(1'b0), .cq_rd_cqn({CQ_W{1'b0}}), .cq_rd_valid(), .cq_rd_ctx(),
    .cq_cfg_valid(), .cq_cfg_cqn(), .cq_cfg_create(),
    .evr_valid(), .evr_set(), .evr_ring(), .evr_log2(), .evr_exc_ring(), .evr_exc_log2(), .evr_exc_buf_log2(),
    .win_wr_valid(), .win_wr_slot(), .win_wr_addr(), .win_wr_len()
    /* verilator lint_on PINCONNECTEMPTY */
);

// The data path is not wired yet (issue 30, item 2): the DMA master and
// the network and interrupt outputs stay idle, and the network input is
// never ready (a segment the host offers waits; nothing is lost).
assign m_axi_awid = {AXI_ID_W{1'b0}};
assign m_axi_awaddr = 64'd0;
assign m_axi_awlen = 8'd0;
assign m_axi_awsize = 3'd0;
assign m_axi_awburst = 2'd1;
assign m_axi_awvalid = 1'b0;
assign m_axi_wdata = {DATA_W{1'b0}};
assign m_axi_wstrb = {DATA_W/8{1'b0}};
assign m_axi_wlast = 1'b0;
assign m_axi_wvalid = 1'b0;
assign m_axi_bready = 1'b1;
assign m_axi_arid = {AXI_ID_W{1'b0}};
assign m_axi_araddr = 64'd0;
assign m_axi_arlen = 8'd0;
assign m_axi_arsize = 3'd0;
assign m_axi_arburst = 2'd1;
assign m_axi_arvalid = 1'b0;
assign m_axi_rready = 1'b1;
assign s_net_tready = 1'b0;
assign m_net_tdata = {DATA_W{1'b0}};
assign m_net_tkeep = {DATA_W/8{1'b0}};
assign m_net_tvalid = 1'b0;
assign m_net_tlast = 1'b0;
assign m_net_tuser = 64'd0;
assign m_irq_valid = 1'b0;
assign m_irq_vector = 4'd0;
assign idle = !adm_busy;
/* verilator lint_off UNUSEDSIGNAL */
wire unused_ports = &{1'b0, m_axi_awready, m_axi_wready, m_axi_bid, m_axi_bresp, m_axi_bvalid, m_axi_arready,
                      m_axi_rid, m_axi_rdata, m_axi_rresp, m_axi_rlast, m_axi_rvalid,
                      s_net_tdata, s_net_tkeep, s_net_tvalid, s_net_tlast, s_net_tuser, m_net_tready, m_irq_ready};
/* verilator lint_on UNUSEDSIGNAL */

// The external regions this build answers at once: vectors and doorbells.
wire vec_req, vec_is_wr, cqdb_req, cqdb_is_wr, qpdb_req, qpdb_is_wr;
/* verilator lint_off UNUSEDSIGNAL */
wire [7:0]  vec_addr;
wire [13:0] cqdb_addr;
wire [14:0] qpdb_addr;
wire [31:0] vec_wr_data, vec_wr_biten, cqdb_wr_data, cqdb_wr_biten, qpdb_wr_data, qpdb_wr_biten;
/* verilator lint_on UNUSEDSIGNAL */

rnic_regs regs (
    .clk(clk),
    .rst(rst),
    .s_axil_awready(s_axil_awready),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awprot(s_axil_awprot),
    .s_axil_wready(s_axil_wready),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_bready(s_axil_bready),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_arready(s_axil_arready),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot),
    .s_axil_rready(s_axil_rready),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .hwif_in_id_build_hash_value(BUILD_HASH),
    .hwif_in_id_data_width_value(DATA_W[31:0]),
    .hwif_in_id_cap_conns_value(CONNS),
    .hwif_in_id_cap_stags_value(STAGS),
    .hwif_in_id_cap_queues_sq_log2(SQ_LOG2[7:0]),
    .hwif_in_id_cap_queues_rq_log2(RQ_LOG2[7:0]),
    .hwif_in_id_cap_queues_cq_log2(CQ_LOG2[7:0]),
    .hwif_in_id_cap_cqs_value(CQS),
    .hwif_in_id_cap_vectors_value(VECTORS),
    .hwif_in_id_cap_windows_value(WINDOWS),
    .hwif_in_counters_tx_fpdus_count_incr(1'b0),
    .hwif_in_counters_tx_octets_count_incr(1'b0),
    .hwif_in_counters_tx_octets_count_incrvalue(64'd0),
    .hwif_in_counters_rx_fpdus_count_incr(1'b0),
    .hwif_in_counters_rx_octets_count_incr(1'b0),
    .hwif_in_counters_rx_octets_count_incrvalue(64'd0),
    .hwif_in_counters_rx_crc_errors_count_incr(1'b0),
    .hwif_in_counters_rx_marker_errors_count_incr(1'b0),
    .hwif_in_counters_rx_rdmap_catastrophic_count_incr(1'b0),
    .hwif_in_counters_rx_rdmap_protection_count_incr(1'b0),
    .hwif_in_counters_rx_rdmap_operation_count_incr(1'b0),
    .hwif_in_counters_rx_ddp_tagged_count_incr(1'b0),
    .hwif_in_counters_rx_ddp_untagged_count_incr(1'b0),
    .hwif_in_counters_tx_terminates_count_incr(1'b0),
    .hwif_in_counters_rx_terminates_count_incr(1'b0),
    .hwif_in_counters_rx_exc_not_enabled_count_incr(1'b0),
    .hwif_in_counters_rx_exc_in_error_count_incr(1'b0),
    .hwif_in_counters_rx_exc_out_of_order_count_incr(1'b0),
    .hwif_in_counters_rx_exc_duplicate_count_incr(1'b0),
    .hwif_in_counters_rx_exc_empty_count_incr(1'b0),
    .hwif_in_counters_dma_reads_count_incr(1'b0),
    .hwif_in_counters_dma_writes_count_incr(1'b0),
    .hwif_in_counters_admin_overrun_count_incr(adm_overrun),
    .hwif_out_admin_cmd_req(cmd_req),
    .hwif_out_admin_cmd_req_is_wr(cmd_is_wr),
    .hwif_in_admin_cmd_rd_ack(cmd_req && !cmd_is_wr),
    .hwif_in_admin_cmd_wr_ack(cmd_req && cmd_is_wr),
    .hwif_in_admin_cmd_rd_data({24'd0, adm_last_op}),
    .hwif_out_admin_cmd_wr_data(cmd_wr_data),
    .hwif_out_admin_cmd_wr_biten(cmd_wr_biten),
    .hwif_in_admin_status_busy(adm_busy),
    .hwif_in_admin_status_code(adm_code),
    .hwif_in_admin_arg0_value(adm_out[31:0]), .hwif_out_admin_arg0_value(args_wr[31:0]), .hwif_in_admin_arg0_value_we(adm_out_we),
    .hwif_in_admin_arg1_value(adm_out[63:32]), .hwif_out_admin_arg1_value(args_wr[63:32]), .hwif_in_admin_arg1_value_we(adm_out_we),
    .hwif_in_admin_arg2_value(adm_out[95:64]), .hwif_out_admin_arg2_value(args_wr[95:64]), .hwif_in_admin_arg2_value_we(adm_out_we),
    .hwif_in_admin_arg3_value(adm_out[127:96]), .hwif_out_admin_arg3_value(args_wr[127:96]), .hwif_in_admin_arg3_value_we(adm_out_we),
    .hwif_in_admin_arg4_value(adm_out[159:128]), .hwif_out_admin_arg4_value(args_wr[159:128]), .hwif_in_admin_arg4_value_we(adm_out_we),
    .hwif_in_admin_arg5_value(adm_out[191:160]), .hwif_out_admin_arg5_value(args_wr[191:160]), .hwif_in_admin_arg5_value_we(adm_out_we),
    .hwif_in_admin_arg6_value(adm_out[223:192]), .hwif_out_admin_arg6_value(args_wr[223:192]), .hwif_in_admin_arg6_value_we(adm_out_we),
    .hwif_in_admin_arg7_value(adm_out[255:224]), .hwif_out_admin_arg7_value(args_wr[255:224]), .hwif_in_admin_arg7_value_we(adm_out_we),
    .hwif_out_vectors_vec_req(vec_req),
    .hwif_out_vectors_vec_addr(vec_addr),
    .hwif_out_vectors_vec_req_is_wr(vec_is_wr),
    .hwif_out_vectors_vec_wr_data(vec_wr_data),
    .hwif_out_vectors_vec_wr_biten(vec_wr_biten),
    .hwif_in_vectors_vec_wr_ack(vec_req && vec_is_wr),
    .hwif_in_vectors_vec_rd_data(32'd0),
    .hwif_in_vectors_vec_rd_ack(vec_req && !vec_is_wr),
    .hwif_out_doorbells_cq_db_req(cqdb_req),
    .hwif_out_doorbells_cq_db_addr(cqdb_addr),
    .hwif_out_doorbells_cq_db_req_is_wr(cqdb_is_wr),
    .hwif_out_doorbells_cq_db_wr_data(cqdb_wr_data),
    .hwif_out_doorbells_cq_db_wr_biten(cqdb_wr_biten),
    .hwif_in_doorbells_cq_db_wr_ack(cqdb_req && cqdb_is_wr),
    .hwif_in_doorbells_cq_db_rd_data(32'd0),
    .hwif_in_doorbells_cq_db_rd_ack(cqdb_req && !cqdb_is_wr),
    .hwif_out_doorbells_qp_db_req(qpdb_req),
    .hwif_out_doorbells_qp_db_addr(qpdb_addr),
    .hwif_out_doorbells_qp_db_req_is_wr(qpdb_is_wr),
    .hwif_out_doorbells_qp_db_wr_data(qpdb_wr_data),
    .hwif_out_doorbells_qp_db_wr_biten(qpdb_wr_biten),
    .hwif_in_doorbells_qp_db_wr_ack(qpdb_req && qpdb_is_wr),
    .hwif_in_doorbells_qp_db_rd_data(32'd0),
    .hwif_in_doorbells_qp_db_rd_ack(qpdb_req && !qpdb_is_wr)
);

endmodule

`resetall
