// rnic_pick: y = v[a], one bit of a 2^AW-bit vector, AW 1..16, as a tree
// of 4-way picks (a LUT each: four data inputs and two bits of a), two
// bits of a at a time from the bottom, a 2-way pick last when AW is odd:
// ceil(AW / 2) LUT levels, 5 for a connection's bit of 1024.
//
// Every level is a net of its own (keep): written as v[a], or as the same
// tree in a function, Yosys and ABC decode a's bits first and map a
// 1024-bit pick in 6 levels (358 LUTs; kept, 5 levels and 341). The VHDL
// twins write v(a).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rnic_pick #(
    parameter AW = 10
) (
    input  wire [(1 << AW)-1:0] v,
    input  wire [AW-1:0]        a,
    output wire                 y
);

initial begin
    if (AW < 1 || AW > 16) begin
        $error("rnic_pick: AW must be 1..16, got %0d", AW);
        $finish;
    end
end

localparam L = (AW + 1) / 2;           // levels

genvar l, i;
generate
    for (l = 0; l <= L; l = l + 1) begin : g_l
        // level l picks by a[2l-1:2l-2] (a[2l-2] alone at an odd AW's top)
        localparam integer N = (2 * l >= AW) ? 1 : ((1 << AW) >> (2 * l));
        (* keep *) wire [N-1:0] t;
        if (l == 0) begin : g_in
            assign t = v;
        end else if (2 * l <= AW) begin : g_4
            for (i = 0; i < N; i = i + 1) begin : g_i
                assign t[i] = a[2*l-1] ? (a[2*l-2] ? g_l[l-1].t[4*i+3] : g_l[l-1].t[4*i+2])
                                       : (a[2*l-2] ? g_l[l-1].t[4*i+1] : g_l[l-1].t[4*i]);
            end
        end else begin : g_2
            assign t[0] = a[2*l-2] ? g_l[l-1].t[1] : g_l[l-1].t[0];
        end
    end
endgenerate

assign y = g_l[L].t[0];

endmodule

`resetall
