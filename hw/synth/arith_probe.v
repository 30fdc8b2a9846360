// arith_probe: the shapes of hw/rtl/rnic_arith.vh between registers, alone,
// for `make synth` (scripts/hw_figures.py) to hold to the 5-level target.
// Inside a block, logic maps deeper than alone (hw/README.md, "LUT
// levels"), so a shape is measured here, where its depth is its own: a
// two-clock sum's first clock with a carry-save stage in front (sum72a of
// csa72, as ddp_rx's bounds and address sums use it), its second clock
// (sum72b), a 33-bit comparison (gt33) and a carry-free equality (sumeq).
// W, the operand width, is 72: the shapes' own width (the parameter is
// there for the synthesis script's width column). Not a datapath block:
// no VHDL twin, no testbench (tests/ddp_rx covers the shapes in place).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module arith_probe #(
    parameter W = 72
) (
    input  wire          clk,
    input  wire [W-1:0]  in_x,
    input  wire [W-1:0]  in_y,
    input  wire [W-1:0]  in_z,
    input  wire [161:0]  in_a,
    output reg  [161:0]  first,
    output reg  [72:0]   second,
    output reg           gt,
    output reg           eq
);

`include "rnic_arith.vh"

initial begin
    if (W != 72) begin
        $error("arith_probe: W must be 72, got %0d", W);
        $finish;
    end
end

reg [71:0]  x_reg = 72'd0, y_reg = 72'd0, z_reg = 72'd0;
reg [161:0] a_reg = 162'd0;
reg [143:0] cs;

always @* begin
    cs = csa72(x_reg, y_reg, z_reg);
end

always @(posedge clk) begin
    x_reg <= in_x;
    y_reg <= in_y;
    z_reg <= in_z;
    a_reg <= in_a;
    first <= sum72a(cs[143:72], cs[71:0] | 72'd1, 1'b0);
    second <= sum72b(a_reg);
    gt <= gt33(x_reg[32:0], y_reg[32:0]);
    eq <= sumeq(x_reg, y_reg, 1'b0, z_reg, {72{1'b1}});
end

endmodule

`resetall
