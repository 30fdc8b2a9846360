// rnic_dev: the RNIC as a device, the top that a PCIe bridge (on a board)
// or the simulated host (hw/sim) drives. docs/device.md is its contract
// with the driver.
//
// Today: the BAR only. s_axil is the BAR (AXI4-Lite, 32-bit data) and
// reaches the generated register block (rnic_regs, from hw/regs/rnic.rdl):
// the chain of blocks, the ID block with this build's parameters, the
// counters. Not yet: the datapath (rnic_tx, rnic_rx), the admin mailbox,
// doorbells, rings, DMA and interrupts (issue 30, item 2); until they come
// every counter reads 0.
//
// Parameters are the build's: they size the datapath and are published in
// the ID block, so that the driver sizes itself from the device it finds.
//   DATA_W      datapath width in bits (64, 128, 256, 512)
//   CONN_W      log2 of the connections (queue pairs)
//   STAG_AW     log2 of the MR table's entries
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
    parameter BUILD_HASH = 32'h0,
    parameter BAR_AW     = 9
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
    if (BAR_AW != 9) begin
        $error("rnic_dev: BAR_AW must be the register block's address width, 9, got %0d", BAR_AW);
        $finish;
    end
end

localparam [31:0] CONNS = 32'd1 << CONN_W;
localparam [31:0] STAGS = 32'd1 << STAG_AW;

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
    .hwif_in_counters_dma_writes_count_incr(1'b0)
);

endmodule

`resetall
