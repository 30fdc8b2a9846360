// rnic_rdarb: shares one of rnic_admin's one-clock table read ports (the
// MR table's, the QP context's) among the device's engines (rnic_dev).
//
// A client holds req high with its index stable until a clock in which its
// gnt is high; in that clock the read goes to rnic_admin (rd_en, rd_index),
// and the table's answer is on the shared data wires in the next clock, for
// that client only.
//
// Client 0 is never kept waiting: it is granted in every clock it asks.
// rnic_sq is client 0, because its doorbell stage reads the QP context in
// the clock after each SQ doorbell and cannot wait (doorbells have no
// ready), and because it asks at most once every other clock (a doorbell
// is a BAR write; the engine reads once per entry), so the others still
// get every clock it leaves free. Clients 1..N-1 take turns (round robin
// from the one after the last granted), so none of them waits more than
// N-1 of its rivals' grants plus client 0's.
//
// Parameters: N clients (2..8), IDX_W bits of index.
`resetall
`timescale 1ns / 1ps
`default_nettype none
module rnic_rdarb #(
    parameter N     = 3,
    parameter IDX_W = 10
) (
    input  wire               clk,
    input  wire               rst,
    input  wire [N-1:0]       req,
    input  wire [N*IDX_W-1:0] idx,
    output reg  [N-1:0]       gnt,
    output wire               rd_en,
    output reg  [IDX_W-1:0]   rd_index
);
initial begin
    if (N < 2 || N > 8) begin
        $error("rnic_rdarb: N must be 2 to 8, got %0d", N);
        $finish;
    end
end

// The first of clients 1..N-1 to look at (the one after the last granted).
reg [2:0] next_reg;
reg       found;
integer   j, c;
always @* begin
    gnt = {N{1'b0}};
    found = 1'b0;
    rd_index = idx[IDX_W-1:0];
    if (req[0]) begin
        gnt[0] = 1'b1;
        found = 1'b1;
    end
    for (j = 0; j < N - 1; j = j + 1) begin
        c = ({29'd0, next_reg} - 1 + j) % (N - 1) + 1;
        if (!found && req[c]) begin
            gnt[c] = 1'b1;
            found = 1'b1;
            rd_index = idx[c*IDX_W +: IDX_W];
        end
    end
end
assign rd_en = |req;

always @(posedge clk) begin
    for (j = 1; j < N; j = j + 1) begin
        if (gnt[j]) next_reg <= j == N - 1 ? 3'd1 : j[2:0] + 3'd1;
    end
    if (rst) next_reg <= 3'd1;
end

endmodule

`resetall
