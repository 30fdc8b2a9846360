// rx_merge: two AXI4-Stream inputs into one output, whole frames, DATA_W
// bits per clock, no storage: rnic_rx's merges of mpa_rx's and tuf_rx's
// streams (pieces, exception segments, early ULPDUs).
//
// A frame starts from whichever input has a beat waiting; when both do,
// from the one the last frame did not come from (round robin: neither
// waits for more than one frame of the other). The choice holds until the
// frame's tlast beat has gone. The output is the chosen input's signals as
// they are (a multiplexer): a beat goes through in the clock it is taken,
// so each input's frames leave in its order, and a report an input makes
// after one of its frames' tlast has gone (mpa_rx's and tuf_rx's
// verdicts) still comes after that tlast on the output. s0_tready and
// s1_tready are m_tready for the chosen input, 0 for the other.
//
// Latency 0 clocks; one beat a clock, no bubble between frames.
//
// Verification: inside rnic_rx (tests/rnic_rx/test_rnic_rx.py, whose TUF
// cases mix connections of both blocks), and the Verilog against its
// VHDL-2008 twin hw/rtl/vhdl/rx_merge.vhd clock for clock there.

`resetall
`timescale 1ns / 1ps
`default_nettype none

module rx_merge #(
    parameter DATA_W = 64,
    parameter USER_W = 8
) (
    input  wire                    clk,
    input  wire                    rst,

    input  wire [DATA_W-1:0]       s0_tdata,
    input  wire [DATA_W/8-1:0]     s0_tkeep,
    input  wire                    s0_tvalid,
    output wire                    s0_tready,
    input  wire                    s0_tlast,
    input  wire [USER_W-1:0]       s0_tuser,

    input  wire [DATA_W-1:0]       s1_tdata,
    input  wire [DATA_W/8-1:0]     s1_tkeep,
    input  wire                    s1_tvalid,
    output wire                    s1_tready,
    input  wire                    s1_tlast,
    input  wire [USER_W-1:0]       s1_tuser,

    output wire [DATA_W-1:0]       m_tdata,
    output wire [DATA_W/8-1:0]     m_tkeep,
    output wire                    m_tvalid,
    input  wire                    m_tready,
    output wire                    m_tlast,
    output wire [USER_W-1:0]       m_tuser
);

reg  inf_reg = 1'b0;       // inside a frame
reg  sel_reg = 1'b0;       // its input (1: s1)
reg  last_reg = 1'b0;      // the input of the last frame started
wire pick = inf_reg ? sel_reg : (s1_tvalid && (!s0_tvalid || !last_reg));

assign m_tdata = pick ? s1_tdata : s0_tdata;
assign m_tkeep = pick ? s1_tkeep : s0_tkeep;
assign m_tvalid = pick ? s1_tvalid : s0_tvalid;
assign m_tlast = pick ? s1_tlast : s0_tlast;
assign m_tuser = pick ? s1_tuser : s0_tuser;
assign s0_tready = !pick && m_tready;
assign s1_tready = pick && m_tready;

always @(posedge clk) begin
    if (m_tvalid && m_tready) begin
        inf_reg <= !m_tlast;
        sel_reg <= pick;
        if (!inf_reg) begin
            last_reg <= pick;
        end
    end
    if (rst) begin
        inf_reg <= 1'b0;
        sel_reg <= 1'b0;
        last_reg <= 1'b0;
    end
end

endmodule

`resetall
