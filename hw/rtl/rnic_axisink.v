// rnic_axisink: absorbs the placement writes that go to the device's own
// receive buffers (rnic_dev, between ddp_rx's AXI4 write master and the
// DMA write engine's placement port).
//
// The device posts buffers of its own to ddp_rx: the Read Request queue's
// (RFC 5040 5.2: one per IRD credit) and the Terminate queue's. What ddp_rx
// places into them also reaches the device as the completion (m_cpl's
// 28-octet Read Request body), so the octets are not kept anywhere: these
// buffers have device addresses with bit 63 set, which no host mapping
// uses, and their bursts end here. Every other burst passes on unchanged.
//
// AXI4's order holds on both sides: W beats follow their bursts' AW order,
// and B responses go back in AW order (ddp_rx matches each to its burst),
// so an absorbed burst is answered OKAY when its turn comes and its W
// beats are in. A queue of the bursts in flight (absorbed or passed, and
// the ID) keeps the order: AW pushes, the W side routes each burst's beats
// by its entry, the B side answers from the head. W beats wait for their
// burst's AW (AXI4 lets a slave wait for AW before W: A3.3.1).
//
// Parameters: DATA_W, ID_W, DEPTH_LOG2 (bursts in flight before AW waits).
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_axisink #(
    parameter DATA_W     = 64,
    parameter ID_W       = 1,
    parameter DEPTH_LOG2 = 4
) (
    input  wire                clk,
    input  wire                rst,
    input  wire [ID_W-1:0]     s_axi_awid,
    input  wire [63:0]         s_axi_awaddr,
    input  wire [7:0]          s_axi_awlen,
    input  wire [2:0]          s_axi_awsize,
    input  wire [1:0]          s_axi_awburst,
    input  wire [3:0]          s_axi_awcache,
    input  wire [2:0]          s_axi_awprot,
    input  wire                s_axi_awvalid,
    output wire                s_axi_awready,
    input  wire [DATA_W-1:0]   s_axi_wdata,
    input  wire [DATA_W/8-1:0] s_axi_wstrb,
    input  wire                s_axi_wlast,
    input  wire                s_axi_wvalid,
    output wire                s_axi_wready,
    output wire [ID_W-1:0]     s_axi_bid,
    output wire [1:0]          s_axi_bresp,
    output wire                s_axi_bvalid,
    input  wire                s_axi_bready,
    output wire [ID_W-1:0]     m_axi_awid,
    output wire [63:0]         m_axi_awaddr,
    output wire [7:0]          m_axi_awlen,
    output wire [2:0]          m_axi_awsize,
    output wire [1:0]          m_axi_awburst,
    output wire [3:0]          m_axi_awcache,
    output wire [2:0]          m_axi_awprot,
    output wire                m_axi_awvalid,
    input  wire                m_axi_awready,
    output wire [DATA_W-1:0]   m_axi_wdata,
    output wire [DATA_W/8-1:0] m_axi_wstrb,
    output wire                m_axi_wlast,
    output wire                m_axi_wvalid,
    input  wire                m_axi_wready,
    input  wire [ID_W-1:0]     m_axi_bid,
    input  wire [1:0]          m_axi_bresp,
    input  wire                m_axi_bvalid,
    output wire                m_axi_bready
);

// The bursts in flight: {absorbed, id}. aw_wp pushes; w_rp is the burst
// whose W beats come next; b_rp the burst answered next.
localparam DEPTH = 1 << DEPTH_LOG2;
reg [ID_W:0]       q [0:DEPTH-1];
reg [DEPTH_LOG2:0] aw_wp_reg, w_rp_reg, b_rp_reg;
wire               full = (aw_wp_reg - b_rp_reg) == DEPTH[DEPTH_LOG2:0];
wire               absorb = s_axi_awaddr[63];

assign m_axi_awid    = s_axi_awid;
assign m_axi_awaddr  = s_axi_awaddr;
assign m_axi_awlen   = s_axi_awlen;
assign m_axi_awsize  = s_axi_awsize;
assign m_axi_awburst = s_axi_awburst;
assign m_axi_awcache = s_axi_awcache;
assign m_axi_awprot  = s_axi_awprot;
assign m_axi_awvalid = s_axi_awvalid && !full && !absorb;
assign s_axi_awready = !full && (absorb || m_axi_awready);
wire   aw_take = s_axi_awvalid && s_axi_awready;

// W: the beats of the burst at w_rp, once its AW is in.
wire        w_known = w_rp_reg != aw_wp_reg;
wire [ID_W:0] w_ent = q[w_rp_reg[DEPTH_LOG2-1:0]];
wire        w_absorb = w_ent[ID_W];
assign m_axi_wdata  = s_axi_wdata;
assign m_axi_wstrb  = s_axi_wstrb;
assign m_axi_wlast  = s_axi_wlast;
assign m_axi_wvalid = s_axi_wvalid && w_known && !w_absorb;
assign s_axi_wready = w_known && (w_absorb || m_axi_wready);
wire   w_end = s_axi_wvalid && s_axi_wready && s_axi_wlast;

// B: the head burst's answer; an absorbed one once its W beats are in.
wire        b_any = b_rp_reg != aw_wp_reg;
wire [ID_W:0] b_ent = q[b_rp_reg[DEPTH_LOG2-1:0]];
wire        b_absorb = b_ent[ID_W];
wire        b_wdone = b_rp_reg != w_rp_reg;
assign s_axi_bvalid = b_any && (b_absorb ? b_wdone : m_axi_bvalid);
assign s_axi_bid    = b_absorb ? b_ent[ID_W-1:0] : m_axi_bid;
assign s_axi_bresp  = b_absorb ? 2'b00 : m_axi_bresp;
assign m_axi_bready = b_any && !b_absorb && s_axi_bready;
wire   b_take = s_axi_bvalid && s_axi_bready;

always @(posedge clk) begin
    if (aw_take) begin
        q[aw_wp_reg[DEPTH_LOG2-1:0]] <= {absorb, s_axi_awid};
        aw_wp_reg <= aw_wp_reg + 1'b1;
    end
    if (w_end) w_rp_reg <= w_rp_reg + 1'b1;
    if (b_take) b_rp_reg <= b_rp_reg + 1'b1;
    if (rst) begin
        aw_wp_reg <= 0;
        w_rp_reg <= 0;
        b_rp_reg <= 0;
    end
end

`ifndef SYNTHESIS
// A B response from downstream with no burst passed to answer is a fault
// of the slave below.
always @(posedge clk) begin
    if (!rst && m_axi_bvalid && b_any && !b_absorb && m_axi_bid != b_ent[ID_W-1:0]) begin
        $error("rnic_axisink: B response for ID %0d, the oldest burst passed has ID %0d", m_axi_bid, b_ent[ID_W-1:0]);
    end
end
`endif

endmodule

`resetall
