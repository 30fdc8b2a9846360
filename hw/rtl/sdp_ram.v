// sdp_ram: simple dual-port RAM, one write port and one registered read
// port, DEPTH words of WIDTH bits. The per-connection tables of the datapath
// live in these (block RAM or LUT RAM on an FPGA); scripts/hw_figures.py
// counts them as memory bits rather than as LUTs.
//
// A read and a write of the same address at the same clock edge return the
// old word: callers that need the new one bypass the RAM themselves.
// rd_en low holds rd_data. The contents start undefined (zero in simulation).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module sdp_ram #(
    parameter WIDTH = 8,
    parameter ADDR_W = 10
) (
    input  wire              clk,

    input  wire              wr_en,
    input  wire [ADDR_W-1:0] wr_addr,
    input  wire [WIDTH-1:0]  wr_data,

    input  wire              rd_en,
    input  wire [ADDR_W-1:0] rd_addr,
    output reg  [WIDTH-1:0]  rd_data
);

`ifdef RNIC_SYNTH_ESTIMATE
// scripts/hw_figures.py's LUT and level figures: a stand-in with the
// timing of a block RAM (inputs registered at the edge, the read word from a
// register) and none of its area, which an FPGA puts in RAM blocks.
reg [2*ADDR_W+WIDTH+1:0] in_q;
always @(posedge clk) begin
    in_q <= {wr_en, wr_addr, wr_data, rd_en, rd_addr};
    rd_data <= in_q[WIDTH-1:0] ^ in_q[2*ADDR_W+WIDTH+1 -: WIDTH];
end
`else
reg [WIDTH-1:0] mem [0:(1 << ADDR_W) - 1];

integer i;
initial begin
    for (i = 0; i < (1 << ADDR_W); i = i + 1) begin
        mem[i] = {WIDTH{1'b0}};
    end
    rd_data = {WIDTH{1'b0}};
end

always @(posedge clk) begin
    if (wr_en) begin
        mem[wr_addr] <= wr_data;
    end
    if (rd_en) begin
        rd_data <= mem[rd_addr];
    end
end
`endif

endmodule

`resetall
