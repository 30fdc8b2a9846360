// sdp_ram: simple dual-port RAM, one write port and one registered read
// port, DEPTH words of WIDTH bits. The per-connection tables of the datapath
// live in these (block RAM or LUT RAM on an FPGA); scripts/hw_figures.py
// counts them as memory bits rather than as LUTs.
//
// A read and a write of the same address at the same clock edge return the
// old word: callers that need the new one bypass the RAM themselves.
// rd_en low holds rd_data. The contents start undefined (zero in simulation).
//
// LUTRAM = 1 asks for distributed RAM (ram_style "distributed") where an
// FPGA tool would take a block RAM: the read word then leaves the rd_data
// flip-flop rather than a block RAM's output latch, which on UltraScale+
// is about 0.8 ns sooner (hw/timing.md), at the cost of LUTs (a dual-port
// 64 x 1 is two LUTs: 1024 x 7 is about 224). For narrow tables whose
// read word starts a long path. The behaviour is the same either way.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module sdp_ram #(
    parameter WIDTH = 8,
    parameter ADDR_W = 10,
    parameter LUTRAM = 0
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
/* verilator lint_off UNUSEDPARAM */
localparam STYLE = LUTRAM ? "distributed" : "block";
/* verilator lint_on UNUSEDPARAM */
(* ram_style = STYLE *)
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
