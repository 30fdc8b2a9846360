// smoke_counter: WIDTH-bit up-counter with a count enable.
//
// This block exists to prove the HDL toolchain end to end (lint, synthesis
// and the cocotb testbenches under Verilator, Icarus and GHDL); its VHDL-2008
// twin is hw/rtl/vhdl/smoke_counter.vhd, with the same ports and generics.
//
// Behaviour: on each rising edge of clk, rst (synchronous, active high) clears
// the count; otherwise the count increments by one, modulo 2**WIDTH, when en
// is high and holds when en is low.
//
// Latency: 1 clock. count is driven straight from a register, so an en (or
// rst) sampled at one rising edge is visible on count after that edge.
// Throughput: one increment per clock.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module smoke_counter #(
    parameter WIDTH = 8
) (
    input  wire             clk,
    input  wire             rst,
    input  wire             en,
    output wire [WIDTH-1:0] count
);

// Refuse an illegal parameter (at time 0 in simulation, or in synthesis)
// rather than build something odd.
initial begin
    if (WIDTH < 1) begin
        $error("smoke_counter: WIDTH must be at least 1, got %0d", WIDTH);
        $finish;
    end
end

reg [WIDTH-1:0] count_reg = {WIDTH{1'b0}};
reg [WIDTH-1:0] count_next;

assign count = count_reg;

always @* begin
    count_next = count_reg;
    if (en) begin
        count_next = count_reg + 1'b1;
    end
end

always @(posedge clk) begin
    count_reg <= count_next;

    if (rst) begin
        count_reg <= {WIDTH{1'b0}};
    end
end

endmodule

`resetall
