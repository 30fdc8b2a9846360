// mpa_tx_mark: second stage of the MPA transmitter (mpa_tx). It inserts MPA
// markers into FPDUs framed by mpa_tx_frame, at every 512 octets of TCP
// sequence space from the connection's marker base (RFC 5044 4.3), and keeps
// each connection's place in that grid in a table.
//
// Every FPDU is a multiple of four octets and markers sit at multiples of
// 512 from the base, so the stream is a sequence of 32-bit words: a marker
// is one word every 128, and this block works on words. A marker's value is
// FPDUPTR, the distance in octets from the FPDU's ULPDU_Length field back
// from the marker, big-endian in the low 16 bits of the word (RFC 5044 4.2);
// a marker that falls where an FPDU starts has FPDUPTR 0 and belongs to that
// FPDU, in front of its ULPDU_Length field, and one that falls between the
// pad and the CRC belongs to the FPDU whose CRC follows (4.3, 4.4), exactly as
// iwarp/mpa's Framer places them.
//
// Input, s_axis: frames from mpa_tx_frame (lane-0 aligned, a multiple of
// four octets), with tfirst and tcrcw as it produces them and
// tuser = {crc_en, mrk_en, conn[CONN_W-1:0]} constant over a frame. A frame
// with mrk_en low passes unchanged (and does not move its connection's
// place: markers are on or off for a whole half connection).
//
// Connection table: for each conn, how many words its next FPDU starts past
// the last marker position. cfg_valid/cfg_ready/cfg_conn/cfg_pos set it:
// cfg_pos = ((next sequence number - marker base) mod 512) / 4, which is 0
// when Full Operation starts. A write must not race frames of the same
// connection inside this block. cfg_ready is low only in a clock where a
// frame's end updates the table.
//
// Output, m_axis: the frames with markers, lane-0 aligned; tuser as it came
// in; tcrcw marks the CRC placeholder word as before (it moves with the
// words). No tfirst: a frame starts after a tlast.
//
// Throughput: one beat per clock out, whatever the frame sizes. A marker
// adds a word, so every 128 / (DATA_W / 32) beats or so, and on some frame
// ends, an output beat carries only held-over words and s_axis_tready is
// low for that clock. Latency: 3 clocks (input register, insertion, merge).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mpa_tx_mark #(
    parameter DATA_W = 64,
    parameter CONN_W = 10
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [DATA_W-1:0]     s_axis_tdata,
    input  wire [DATA_W/8-1:0]   s_axis_tkeep,
    input  wire                  s_axis_tvalid,
    output wire                  s_axis_tready,
    input  wire                  s_axis_tlast,
    input  wire [CONN_W+1:0]     s_axis_tuser,
    input  wire                  s_axis_tfirst,
    input  wire [DATA_W/32-1:0]  s_axis_tcrcw,

    input  wire                  cfg_valid,
    output wire                  cfg_ready,
    input  wire [CONN_W-1:0]     cfg_conn,
    input  wire [6:0]            cfg_pos,

    output reg  [DATA_W-1:0]     m_axis_tdata,
    output reg  [DATA_W/8-1:0]   m_axis_tkeep,
    output reg                   m_axis_tvalid,
    input  wire                  m_axis_tready,
    output reg                   m_axis_tlast,
    output reg  [CONN_W+1:0]     m_axis_tuser,
    output reg  [DATA_W/32-1:0]  m_axis_tcrcw
);

localparam WPB = DATA_W / 32;           // words per beat
localparam N_W = $clog2(WPB) + 1;       // a word count 0 .. WPB
localparam E_W = $clog2(WPB + 1) + 1;   // a word count 0 .. WPB + 1 and more
localparam USER_W = CONN_W + 2;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("mpa_tx_mark: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
end

// --- b0: input register, and the table read for a frame's first beat ------

reg              b0_valid;
reg [DATA_W-1:0] b0_data;
reg [N_W-1:0]    b0_n;
reg              b0_last;
reg              b0_first;
reg [WPB-1:0]    b0_crcw;
reg [USER_W-1:0] b0_user;
reg              b0_bypass;  // first beat: continue from the togo register
reg [7:0]        b0_c0;      // 128 - n
reg [6:0]        b0_c1;      // 127 - n
reg [E_W-1:0]    b0_n1;      // n + 1
reg [WPB-1:0]    b0_nt;      // b0_nt[x]: x < n

wire b1_take;
assign s_axis_tready = !b0_valid || b1_take;
wire b0_load = s_axis_tvalid && s_axis_tready;

reg [N_W-1:0] s_n;
integer i;
always @* begin
    s_n = {N_W{1'b0}};
    for (i = 0; i < WPB; i = i + 1) begin
        if (s_axis_tkeep[4*i]) begin
            s_n = i[N_W-1:0] + 1'b1;
        end
    end
end

always @(posedge clk) begin
    if (b1_take) begin
        b0_valid <= 1'b0;
    end
    if (b0_load) begin
        b0_valid <= 1'b1;
        b0_data <= s_axis_tdata;
        b0_n <= s_n;
        b0_last <= s_axis_tlast;
        b0_first <= s_axis_tfirst;
        b0_crcw <= s_axis_tcrcw;
        b0_user <= s_axis_tuser;
        b0_c0 <= 8'd128 - {{8-N_W{1'b0}}, s_n};
        b0_c1 <= 7'd127 - {{7-N_W{1'b0}}, s_n};
        b0_n1 <= {{E_W-N_W{1'b0}}, s_n} + 1'b1;
        for (i = 0; i < WPB; i = i + 1) begin
            b0_nt[i] <= s_axis_tkeep[4*i];
        end
        // A frame of the connection whose frame ended last continues from
        // the togo register: the table may not have its new value yet.
        b0_bypass <= (b1_take && b0_last)
            ? (b0_user[CONN_W] && b0_user[CONN_W-1:0] == s_axis_tuser[CONN_W-1:0])
            : (have_last && last_conn == s_axis_tuser[CONN_W-1:0]);
    end
    if (rst) begin
        b0_valid <= 1'b0;
    end
end

// The table holds, per connection, the words still to go before the next
// marker position ("togo", 0 .. 127; 0: a marker comes first). It is LUT
// RAM on an FPGA (7 bits a connection): its read word goes through the
// countdown into its own write data and b1's enables in one clock, which
// a block RAM's late output would make the block's longest path
// (hw/timing.md).
wire [6:0] ram_q;
wire       tbl_we;
wire [CONN_W-1:0] tbl_waddr;
wire [6:0] tbl_wdata;

sdp_ram #(.WIDTH(7), .ADDR_W(CONN_W), .LUTRAM(1)) togo_table (
    .clk(clk),
    .wr_en(tbl_we),
    .wr_addr(tbl_waddr),
    .wr_data(tbl_wdata),
    .rd_en(b0_load && s_axis_tfirst),
    .rd_addr(s_axis_tuser[CONN_W-1:0]),
    .rd_data(ram_q)
);

// --- b1: marker insertion ----------------------------------------------------

reg [6:0]        togo;       // words to the next marker position
reg [6:0]        t0;         // FPDUPTR of the frame's first marker after its header, in words
reg [6:0]        mk;         // markers after the header so far in the frame
reg              inc_pend;   // the beat before carried one, not yet in k
reg              have_last;  // last_conn is valid
reg [CONN_W-1:0] last_conn;  // the connection of the last frame that ended

reg                   b1_valid;
reg [32*(WPB+1)-1:0]  b1_e;
reg [E_W-1:0]         b1_ne;
reg [WPB:0]           b1_crcw;
reg                   b1_last;
reg [USER_W-1:0]      b1_user;

wire b2_take;
wire b1_ready = !b1_valid || b2_take;
assign b1_take = b0_valid && b1_ready;

wire [CONN_W-1:0] conn0 = b0_user[CONN_W-1:0];
wire mrk0 = b0_user[CONN_W];
wire use_ram = b0_first && !b0_bypass;
wire [6:0] togo_cur = use_ram ? ram_q : togo;
// togo - n, plus 128 when togo < n: the carry out says whether a marker
// falls in this beat, and the marker's word moves the next one on by one.
// Worked out for both sources of togo, so that the choice comes last.
wire [7:0] sum0_r = {1'b0, ram_q} + b0_c0;
wire [6:0] sum1_r = ram_q + b0_c1;
wire [7:0] sum0_t = {1'b0, togo} + b0_c0;
wire [6:0] sum1_t = togo + b0_c1;
wire no_mark = use_ram ? sum0_r[7] : sum0_t[7];
wire do_mark = mrk0 && !no_mark;
wire [6:0] togo_next = use_ram ? (sum0_r[7] ? sum0_r[6:0] : sum1_r)
                               : (sum0_t[7] ? sum0_t[6:0] : sum1_t);
wire lead = b0_first && togo_cur == 7'd0;
// FPDUPTR (RFC 5044 4.2) of the j-th marker after an FPDU's header is
// t0 + 128 j words, t0 being the words from the header to the first grid
// point after it (127 behind a leading marker): no adder needed. The marker
// in front of an FPDU has FPDUPTR 0.
wire [6:0] t0_cur = b0_first ? togo_cur : t0;
wire [6:0] mk_use = b0_first ? 7'd0 : mk;
wire [15:0] fpduptr = lead ? 16'd0 : {mk_use, t0_cur, 2'b00};
wire [31:0] marker_word = {fpduptr[7:0], fpduptr[15:8], 16'h0000};

reg [32*(WPB+1)-1:0] e;
reg [WPB:0]          e_crcw;
// The beat's words and flags with a zero word on either side, so that
// word x - 1 and word x have indices in range for every x in 0 .. WPB.
wire [32*(WPB+2)-1:0] d_ext = {32'h0, b0_data, 32'h0};
wire [WPB+1:0]        c_ext = {1'b0, b0_crcw, 1'b0};
wire [WPB+1:0]        nt_ext = {1'b0, b0_nt, 1'b0};
integer x;
always @* begin
    for (x = 0; x <= WPB; x = x + 1) begin
        // The marker goes before word togo when togo < n (b0_nt[togo]);
        // the words from togo on move up one (those up to n matter).
        if (mrk0 && nt_ext[x+1] && x == {25'd0, togo_cur}) begin
            e[32*x +: 32] = marker_word;
            e_crcw[x] = 1'b0;
        end else if (mrk0 && x > {25'd0, togo_cur} && nt_ext[x]) begin
            e[32*x +: 32] = d_ext[32*x +: 32];
            e_crcw[x] = c_ext[x];
        end else begin
            e[32*x +: 32] = d_ext[32*(x+1) +: 32];
            e_crcw[x] = c_ext[x+1];
        end
    end
end

assign tbl_we = cfg_valid && cfg_ready || (b1_take && b0_last && mrk0);
assign tbl_waddr = (b1_take && b0_last && mrk0) ? conn0 : cfg_conn;
assign tbl_wdata = (b1_take && b0_last && mrk0) ? togo_next : (7'd0 - cfg_pos);
assign cfg_ready = !(b1_take && b0_last && mrk0);

always @(posedge clk) begin
    if (b2_take) begin
        b1_valid <= 1'b0;
    end
    if (b1_take) begin
        b1_valid <= 1'b1;
        b1_e <= e;
        b1_ne <= do_mark ? b0_n1 : {{E_W-N_W{1'b0}}, b0_n};
        b1_crcw <= e_crcw;
        b1_last <= b0_last;
        b1_user <= b0_user;
        // Meaningless for a frame without markers, whose end does not
        // set have_last, so nothing reads it.
        togo <= togo_next;
        if (b0_first) begin
            t0 <= lead ? 7'd127 : togo_cur;
        end
        // Markers are 127 words apart, never in two beats running, so mk
        // may count each one a beat late.
        mk <= b0_first ? 7'd0 : mk + {6'd0, inc_pend};
        inc_pend <= do_mark && !lead;
        if (b0_last) begin
            have_last <= mrk0;
            last_conn <= conn0;
        end
    end
    if (cfg_valid && cfg_ready && cfg_conn == last_conn) begin
        have_last <= 1'b0;
    end
    if (rst) begin
        b1_valid <= 1'b0;
        have_last <= 1'b0;
    end
end

// --- b2: merge with the words held over from the beat before ---------------

reg [32*WPB-1:0] hold;
reg [WPB-1:0]    hold_crcw;
reg [N_W-1:0]    h;          // words held, 0 .. WPB
reg              hold_last;  // the held words end a frame
reg [USER_W-1:0] hold_user;
// h == WPB || hold_last, kept beside them: b2_take enables every 512-bit
// register of the stage, and worked out from h it was the block's longest
// path under the FPGA estimate (hw/timing.md: 275 MHz at W=512).
reg              flush;

wire out_load = !m_axis_tvalid || m_axis_tready;
assign b2_take = b1_valid && out_load && !flush;

// The expanded words placed after the held ones: word k of the result is
// held word k for k < h, else expanded word k - h.
wire [32*2*WPB-1:0] placed = {{32*(WPB-1){1'b0}}, b1_e} << (32 * h);
wire [2*WPB-1:0]    placed_crcw = {{(WPB-1){1'b0}}, b1_crcw} << h;
wire [32*2*WPB-1:0] hold_ext = {{32*WPB{1'b0}}, hold};  // h <= WPB: the upper half never shows
wire [2*WPB-1:0]    hold_crcw_ext = {{WPB{1'b0}}, hold_crcw};
reg  [32*2*WPB-1:0] comb;
reg  [2*WPB-1:0]    comb_crcw;
integer k;
always @* begin
    for (k = 0; k < 2 * WPB; k = k + 1) begin
        if (k < {{32-N_W{1'b0}}, h}) begin
            comb[32*k +: 32] = hold_ext[32*k +: 32];
            comb_crcw[k] = hold_crcw_ext[k];
        end else begin
            comb[32*k +: 32] = placed[32*k +: 32];
            comb_crcw[k] = placed_crcw[k];
        end
    end
end
wire [E_W:0] total = {{E_W+1-N_W{1'b0}}, h} + {1'b0, b1_ne};
wire [N_W-1:0] h_over = total[N_W-1:0] - WPB[N_W-1:0];  // h after a full beat out
wire [31:0] total32 = {{31-E_W{1'b0}}, total};

function [DATA_W/8-1:0] word_keep(input integer words);
    integer j;
    begin
        for (j = 0; j < DATA_W / 8; j = j + 1) begin
            word_keep[j] = j < 4 * words;
        end
    end
endfunction

always @(posedge clk) begin
    if (out_load) begin
        m_axis_tvalid <= 1'b0;
    end
    if (out_load && flush) begin
        m_axis_tvalid <= 1'b1;
        m_axis_tdata <= hold;
        m_axis_tkeep <= word_keep({{32-N_W{1'b0}}, h});
        m_axis_tlast <= hold_last;
        m_axis_tuser <= hold_user;
        m_axis_tcrcw <= hold_crcw;
        h <= {N_W{1'b0}};
        hold_last <= 1'b0;
        flush <= 1'b0;
    end else if (b2_take) begin
        m_axis_tvalid <= 1'b1;
        m_axis_tdata <= comb[32*WPB-1:0];
        m_axis_tuser <= b1_user;
        m_axis_tcrcw <= comb_crcw[WPB-1:0];
        hold <= comb[32*2*WPB-1:32*WPB];
        hold_crcw <= comb_crcw[2*WPB-1:WPB];
        hold_user <= b1_user;
        if (total32 <= WPB) begin
            // Only a frame's last beat can leave less than a full beat.
            m_axis_tkeep <= word_keep(total32);
            m_axis_tlast <= b1_last;
            h <= {N_W{1'b0}};
            flush <= 1'b0;
        end else begin
            m_axis_tkeep <= {DATA_W/8{1'b1}};
            m_axis_tlast <= 1'b0;
            h <= h_over;
            hold_last <= b1_last;
            flush <= {{32-N_W{1'b0}}, h_over} == WPB || b1_last;
        end
    end
    if (rst) begin
        m_axis_tvalid <= 1'b0;
        h <= {N_W{1'b0}};
        hold_last <= 1'b0;
        flush <= 1'b0;
    end
end

endmodule

`resetall
