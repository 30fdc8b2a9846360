// rnic_recmux: N valid/ready streams of W-bit records into one (rnic_dev:
// the completion records of rnic_sq and rnic_rq into rnic_cq's one port,
// the engines' events into the event writer, the receive buffers of rnic_rq
// and rnic_rresp into ddp_rx's post port).
//
// Round robin: the first input with a record at or after the one after
// the last that passed. An offer is kept until taken (AXI4-Stream's rule:
// once m_valid is high with an input's record, that record stays on m_data
// until m_ready), so a stalled output never swaps the record under the
// reader. Each input's own records keep their order; the inputs'
// interleaving is the arbiter's.
//
// Combinational from input to output (no register: a record passes in the
// clock it is offered when the output is ready); s_ready[i] is m_ready for
// the chosen input and 0 for the others.
//
// Parameters: N inputs (2..8), W bits of record.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_recmux #(
    parameter N = 2,
    parameter W = 8
) (
    input  wire           clk,
    input  wire           rst,
    input  wire [N-1:0]   s_valid,
    output wire [N-1:0]   s_ready,
    input  wire [N*W-1:0] s_data,
    output wire           m_valid,
    input  wire           m_ready,
    output wire [W-1:0]   m_data
);
initial begin
    if (N < 2 || N > 8) begin
        $error("rnic_recmux: N must be 2 to 8, got %0d", N);
        $finish;
    end
end

reg  [2:0] next_reg;   // where the round robin starts
reg  [2:0] held_reg;   // the input offered and not yet taken
reg        hold_reg;
reg  [2:0] pick;
reg        any;
integer    j;
/* verilator lint_off UNUSEDSIGNAL */
integer    c;   // [2:0] used
/* verilator lint_on UNUSEDSIGNAL */
always @* begin
    pick = 3'd0;
    any = 1'b0;
    for (j = 0; j < N; j = j + 1) begin
        c = ({29'd0, next_reg} + j) % N;
        if (!any && s_valid[c]) begin
            pick = c[2:0];
            any = 1'b1;
        end
    end
    if (hold_reg) begin
        pick = held_reg;
        any = 1'b1;
    end
end
assign m_valid = any;
assign m_data = s_data[pick*W +: W];
assign s_ready = m_ready && any ? {{(N-1){1'b0}}, 1'b1} << pick : {N{1'b0}};

always @(posedge clk) begin
    if (any && m_ready) begin
        next_reg <= {29'd0, pick} == N - 1 ? 3'd0 : pick + 3'd1;
        hold_reg <= 1'b0;
    end else if (any) begin
        held_reg <= pick;
        hold_reg <= 1'b1;
    end
    if (rst) begin
        next_reg <= 3'd0;
        hold_reg <= 1'b0;
    end
end

endmodule

`resetall
