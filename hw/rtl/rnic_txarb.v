// rnic_txarb: the message sources of the transmit side (rnic_sq's work
// requests and Terminates, rnic_rresp's Read Responses) into rnic_tx's one
// descriptor port and one payload port (rnic_dev).
//
// rnic_tx takes a message as a descriptor, then (when the descriptor says
// so) its payload as one frame; payloads follow their descriptors in
// order. So the arbiter passes a message whole: it offers one source's
// descriptor (round robin, as rnic_recmux: an offer is kept until taken),
// and when the taken descriptor has a payload (s_desc_pay), that source
// owns the payload port until the frame's last beat has passed; no other
// descriptor is offered meanwhile: the next descriptor can pass in the
// clock after the last payload beat (one clock per message with a payload;
// the engines take longer than that between messages anyway).
//
// Ports: per source i, s_desc_* (the descriptor as one D_W-bit vector,
// slice i; s_desc_pay[i] whether it carries a payload frame) and s_pay_*
// (slice i); m_desc_*, m_axis_* toward rnic_tx. Combinational from inputs
// to outputs.
//
// Parameters: N sources (2..8), D_W bits of descriptor, DATA_W bits of
// payload.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_txarb #(
    parameter N      = 2,
    parameter D_W    = 8,
    parameter DATA_W = 64
) (
    input  wire                  clk,
    input  wire                  rst,
    input  wire [N-1:0]          s_desc_valid,
    output wire [N-1:0]          s_desc_ready,
    input  wire [N*D_W-1:0]      s_desc,
    input  wire [N-1:0]          s_desc_pay,
    input  wire [N*DATA_W-1:0]   s_pay_data,
    input  wire [N*DATA_W/8-1:0] s_pay_keep,
    input  wire [N-1:0]          s_pay_valid,
    output wire [N-1:0]          s_pay_ready,
    input  wire [N-1:0]          s_pay_last,
    output wire                  m_desc_valid,
    input  wire                  m_desc_ready,
    output wire [D_W-1:0]        m_desc,
    output wire [DATA_W-1:0]     m_axis_tdata,
    output wire [DATA_W/8-1:0]   m_axis_tkeep,
    output wire                  m_axis_tvalid,
    input  wire                  m_axis_tready,
    output wire                  m_axis_tlast
);
localparam BYTES = DATA_W / 8;

// The descriptors, merged as records ({pay, descriptor}), held back while
// a payload is owed.
reg              owed_reg;   // a payload frame of owner_reg is still to pass
reg  [N-1:0]     owner_reg;  // one-hot
wire             d_valid, d_ready;
wire [D_W:0]     d_rec;
wire [N-1:0]     d_sel;      // the source whose descriptor is taken
reg  [N*(D_W+1)-1:0] recs;
integer          i;
always @* begin
    for (i = 0; i < N; i = i + 1) recs[i*(D_W+1) +: D_W+1] = {s_desc_pay[i], s_desc[i*D_W +: D_W]};
end
rnic_recmux #(.N(N), .W(D_W + 1)) u_desc (
    .clk(clk), .rst(rst),
    .s_valid(owed_reg ? {N{1'b0}} : s_desc_valid), .s_ready(d_sel), .s_data(recs),
    .m_valid(d_valid), .m_ready(d_ready), .m_data(d_rec)
);
assign m_desc_valid = d_valid;
assign d_ready = m_desc_ready;
assign m_desc = d_rec[D_W-1:0];
assign s_desc_ready = d_sel;

// The payload: the owner's frame only.
reg [DATA_W-1:0] p_data;
reg [BYTES-1:0]  p_keep;
always @* begin
    p_data = {DATA_W{1'b0}};
    p_keep = {BYTES{1'b0}};
    for (i = 0; i < N; i = i + 1) begin
        if (owner_reg[i]) begin
            p_data = p_data | s_pay_data[i*DATA_W +: DATA_W];
            p_keep = p_keep | s_pay_keep[i*BYTES +: BYTES];
        end
    end
end
assign m_axis_tdata  = p_data;
assign m_axis_tkeep  = p_keep;
assign m_axis_tlast  = |(s_pay_last & owner_reg);
assign m_axis_tvalid = owed_reg && |(s_pay_valid & owner_reg);
assign s_pay_ready = owed_reg && m_axis_tready ? owner_reg : {N{1'b0}};

always @(posedge clk) begin
    if (m_axis_tvalid && m_axis_tready && m_axis_tlast) owed_reg <= 1'b0;
    if (d_valid && d_ready && d_rec[D_W]) begin
        owed_reg <= 1'b1;
        owner_reg <= d_sel;
    end
    if (rst) begin
        owed_reg <= 1'b0;
        owner_reg <= {N{1'b0}};
    end
end

endmodule

`resetall
