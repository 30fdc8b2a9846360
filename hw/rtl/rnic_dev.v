// rnic_dev: the RNIC as a device, the top that a PCIe bridge (on a board)
// or the simulated host (hw/sim) drives. docs/device.md is its contract
// with the driver.
//
// Today: the BAR only. s_axil is the BAR (AXI4-Lite, 32-bit data, 128
// KiB) and reaches the generated register block (rnic_regs, from
// hw/regs/rnic.rdl): the chain of blocks, the ID block with this build's
// parameters, the counters, the admin mailbox's registers, and the
// external regions the device answers itself (the mailbox's CMD, the
// interrupt vectors, the doorbells). Not yet: the datapath (rnic_tx,
// rnic_rx), the admin commands, rings, DMA and interrupts (issue 30, item
// 2). Until they come:
//   - a command written to CMD is answered at once, not BUSY, with
//     STATUS.CODE = 1 (BAD_OPCODE): this build executes no command; CMD
//     reads back the opcode of the last command written;
//   - the vectors' registers read 0 and ignore writes; doorbells are taken
//     and ignored (they read 0, as the contract says);
//   - every counter reads 0.
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
    parameter BAR_AW     = 17
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
    output wire [1:0]        s_axil_rresp
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
// STATUS.CODE for a command this build does not execute (docs/device.md).
localparam [7:0] ST_BAD_OPCODE = 8'd1;

// The mailbox's CMD register: a write is a command; this build knows none.
wire        cmd_req, cmd_is_wr;
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] cmd_wr_data, cmd_wr_biten;   // the opcode is [7:0]
wire [255:0] args_wr;                     // ARG0..ARG7 as the driver wrote them
/* verilator lint_on UNUSEDSIGNAL */
reg  [7:0]  cmd_op_reg;
reg  [7:0]  status_code_reg;
always @(posedge clk) begin
    if (rst) begin
        cmd_op_reg <= 8'd0;
        status_code_reg <= 8'd0;
    end else if (cmd_req && cmd_is_wr) begin
        cmd_op_reg <= cmd_wr_data[7:0];
        status_code_reg <= ST_BAD_OPCODE;
    end
end

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
    .hwif_in_counters_admin_overrun_count_incr(1'b0),
    .hwif_out_admin_cmd_req(cmd_req),
    .hwif_out_admin_cmd_req_is_wr(cmd_is_wr),
    .hwif_in_admin_cmd_rd_ack(cmd_req && !cmd_is_wr),
    .hwif_in_admin_cmd_wr_ack(cmd_req && cmd_is_wr),
    .hwif_in_admin_cmd_rd_data({24'd0, cmd_op_reg}),
    .hwif_out_admin_cmd_wr_data(cmd_wr_data),
    .hwif_out_admin_cmd_wr_biten(cmd_wr_biten),
    .hwif_in_admin_status_busy(1'b0),
    .hwif_in_admin_status_code(status_code_reg),
    .hwif_in_admin_arg0_value(32'd0), .hwif_out_admin_arg0_value(args_wr[31:0]), .hwif_in_admin_arg0_value_we(1'b0),
    .hwif_in_admin_arg1_value(32'd0), .hwif_out_admin_arg1_value(args_wr[63:32]), .hwif_in_admin_arg1_value_we(1'b0),
    .hwif_in_admin_arg2_value(32'd0), .hwif_out_admin_arg2_value(args_wr[95:64]), .hwif_in_admin_arg2_value_we(1'b0),
    .hwif_in_admin_arg3_value(32'd0), .hwif_out_admin_arg3_value(args_wr[127:96]), .hwif_in_admin_arg3_value_we(1'b0),
    .hwif_in_admin_arg4_value(32'd0), .hwif_out_admin_arg4_value(args_wr[159:128]), .hwif_in_admin_arg4_value_we(1'b0),
    .hwif_in_admin_arg5_value(32'd0), .hwif_out_admin_arg5_value(args_wr[191:160]), .hwif_in_admin_arg5_value_we(1'b0),
    .hwif_in_admin_arg6_value(32'd0), .hwif_out_admin_arg6_value(args_wr[223:192]), .hwif_in_admin_arg6_value_we(1'b0),
    .hwif_in_admin_arg7_value(32'd0), .hwif_out_admin_arg7_value(args_wr[255:224]), .hwif_in_admin_arg7_value_we(1'b0),
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
