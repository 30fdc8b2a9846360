// mpa_tx_frame: first stage of the MPA transmitter (mpa_tx). It turns each
// ULPDU into the octets of its FPDU without markers: ULPDU_Length, the ULPDU,
// pad to a multiple of four, and four zero octets that hold the CRC's place
// (RFC 5044 4.1). mpa_tx_mark inserts the markers and mpa_tx fills the CRC.
//
// Input, s_axis: one frame per ULPDU, lane-0 aligned: every beat full but
// the last, whose tkeep is a contiguous run from lane 0 (AXI4-Stream octet
// order, tdata[7:0] first). tuser = {user[USER_W-1:0], len[15:0]} is sampled
// on the first beat: len is the ULPDU's length, which must be known before
// its first octet goes out (the DDP transmitter, ddp_tx, knows it); user is
// carried to the output unchanged.
//
// Output, m_axis: one frame per FPDU, lane-0 aligned, a multiple of four
// octets, the last four being the CRC placeholder (zero). Alongside:
//   tuser   the frame's user field, on every beat;
//   tfirst  high on the frame's first beat;
//   tcrcw   one bit per 32-bit word: the word that holds the CRC placeholder
//           (one bit set, on the frame's last beat only).
// Pad and placeholder octets are zero whatever the input carried in the
// lanes tkeep dropped.
//
// Errors: err_valid high for one clock, err_code a bit per error found in
// that clock (two can coincide, for two frames):
//   bit 0  len is 0 or more than 64768 (MaxULPDU, RFC 5044 3 / iwarp/mpa):
//          the frame is consumed and nothing is sent for it.
//   bit 1  the frame's octet count differs from len, found 3 clocks after
//          its last beat: the FPDU has gone out with the announced
//          ULPDU_Length and the octets actually given, so the peer will
//          refuse it; an integration fault upstream, reported here.
//
// Throughput: one beat per clock in and out, except that a frame whose last
// input beat cannot hold the length field's two octets of shift, the pad and
// the placeholder takes one extra output beat, during which s_axis_tready is
// low. Latency: 1 clock (the output is registered).

`resetall
`timescale 1ns / 1ps
`default_nettype none

module mpa_tx_frame #(
    parameter DATA_W = 64,
    parameter USER_W = 1
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire [DATA_W-1:0]     s_axis_tdata,
    input  wire [DATA_W/8-1:0]   s_axis_tkeep,
    input  wire                  s_axis_tvalid,
    output wire                  s_axis_tready,
    input  wire                  s_axis_tlast,
    input  wire [USER_W+15:0]    s_axis_tuser,

    output reg  [DATA_W-1:0]     m_axis_tdata,
    output reg  [DATA_W/8-1:0]   m_axis_tkeep,
    output reg                   m_axis_tvalid,
    input  wire                  m_axis_tready,
    output reg                   m_axis_tlast,
    output reg  [USER_W-1:0]     m_axis_tuser,
    output reg                   m_axis_tfirst,
    output reg  [DATA_W/32-1:0]  m_axis_tcrcw,

    output reg                   err_valid,
    output reg  [1:0]            err_code
);

localparam L = DATA_W / 8;       // octets per beat
localparam WPB = DATA_W / 32;    // 32-bit words per beat
localparam KEEP_LOG = $clog2(L);
localparam [16:0] MAX_ULPDU = 17'd64768;

initial begin
    if (DATA_W != 64 && DATA_W != 128 && DATA_W != 256 && DATA_W != 512) begin
        $error("mpa_tx_frame: DATA_W must be 64, 128, 256 or 512, got %0d", DATA_W);
        $finish;
    end
end

reg              in_frame;       // a frame's first beat has been taken
reg              dropping;       // the frame being taken is refused
reg  [15:0]      carry;          // the previous beat's top two octets
reg  [15:0]      len_q;          // the frame's announced length
reg  [USER_W-1:0] user_q;
reg              extra;          // one more output beat is due
reg  [DATA_W-1:0] extra_data;
reg  [L-1:0]     extra_keep;
reg  [WPB-1:0]   extra_crcw;

wire load = !m_axis_tvalid || m_axis_tready;
assign s_axis_tready = load && !extra;
wire take = s_axis_tvalid && s_axis_tready;

wire first = !in_frame;
wire [15:0] len_in = s_axis_tuser[15:0];
wire [USER_W-1:0] user_in = first ? s_axis_tuser[USER_W+15:16] : user_q;
wire bad_len = (len_in == 16'd0) || ({1'b0, len_in} > MAX_ULPDU);

// The beat shifted up by the two octets of the length field (first beat) or
// of the carry (the others).
wire [15:0] head = first ? {len_in[7:0], len_in[15:8]} : carry;
wire [DATA_W+15:0] shifted = {s_axis_tdata, head};

// On a frame's last beat, everything follows from tkeep, a run of m octets
// from lane 0, without counting: octet k of the shifted beat is content
// (head or data) when k < 2 or tkeep[k-2]; word j holds content when j = 0
// or tkeep[4j-2], the pad sharing the last such word; the placeholder is the
// word after it. When every word holds content the placeholder, and the
// data octets past the beat (tkeep[L-2], tkeep[L-1]), spill into an extra
// beat.
reg [WPB-1:0]    cw;             // word holds content
reg [DATA_W-1:0] last_data;
reg [L-1:0]      last_keep;
reg [WPB-1:0]    last_crcw;
wire [DATA_W-1:0] spill_data;
wire [L-1:0]      spill_keep;
wire [WPB-1:0]    spill_crcw;
// tkeep moved up two lanes (the head's), cw up one word: every index below
// is then in range.
wire [L+1:0]     keep_ext = {s_axis_tkeep, 2'b11};
wire [WPB:0]     cw_ext = {cw, 1'b0};
integer k, j;
always @* begin
    for (j = 0; j < WPB; j = j + 1) begin
        cw[j] = keep_ext[4*j];
    end
end
always @* begin
    for (k = 0; k < L; k = k + 1) begin
        last_data[8*k +: 8] = keep_ext[k] ? shifted[8*k +: 8] : 8'h00;
        last_keep[k] = cw[k / 4] || cw_ext[k / 4];
    end
    for (k = 0; k < WPB; k = k + 1) begin
        last_crcw[k] = cw_ext[k] && !cw[k];
    end
end
assign spill_data = {{DATA_W-16{1'b0}},
                     s_axis_tkeep[L-1] ? shifted[DATA_W+8 +: 8] : 8'h00,
                     s_axis_tkeep[L-2] ? shifted[DATA_W +: 8] : 8'h00};
assign spill_keep = {{L-8{1'b0}}, {4{s_axis_tkeep[L-2]}}, 4'hf};
assign spill_crcw = {{WPB-2{1'b0}}, s_axis_tkeep[L-2], !s_axis_tkeep[L-2]};
wire spill = cw[WPB-1];

// The length check is off the datapath: a frame's last beat gives its beat
// count and m - 1 (the top lane of tkeep), and two clocks later these are
// compared with len - 1.
reg [KEEP_LOG-1:0] top;
always @* begin
    top = {KEEP_LOG{1'b0}};
    for (k = 0; k < L; k = k + 1) begin
        if (s_axis_tkeep[k] && (k == L - 1 || !s_axis_tkeep[(k + 1) % L])) begin
            top = top | k[KEEP_LOG-1:0];
        end
    end
end
reg [15-KEEP_LOG:0] beats;       // beats of the frame taken before this one
reg                 c1_valid, c2_valid;
reg [15:0]          c1_len, c2_lenm1;
reg [15-KEEP_LOG:0] c1_beats, c2_beats;
reg [KEEP_LOG-1:0]  c1_top, c2_top;

always @(posedge clk) begin
    err_valid <= 1'b0;
    err_code <= 2'b00;
    if (load) begin
        m_axis_tvalid <= 1'b0;
    end
    if (extra && load) begin
        m_axis_tvalid <= 1'b1;
        m_axis_tdata <= extra_data;
        m_axis_tkeep <= extra_keep;
        m_axis_tlast <= 1'b1;
        m_axis_tfirst <= 1'b0;
        m_axis_tcrcw <= extra_crcw;
        extra <= 1'b0;
    end else if (take) begin
        carry <= s_axis_tdata[DATA_W-1 -: 16];
        if (first) begin
            len_q <= len_in;
            user_q <= user_in;
            dropping <= bad_len;
            beats <= 1;
        end else begin
            beats <= beats + 1'b1;
        end
        in_frame <= !s_axis_tlast;
        if (first && bad_len) begin
            err_valid <= 1'b1;
            err_code[0] <= 1'b1;
        end
        c1_valid <= s_axis_tlast && !(first ? bad_len : dropping);
        c1_len <= first ? len_in : len_q;
        c1_beats <= first ? {16-KEEP_LOG{1'b0}} : beats;
        c1_top <= top;
        if (!(first ? bad_len : dropping)) begin
            m_axis_tvalid <= 1'b1;
            m_axis_tuser <= user_in;
            m_axis_tfirst <= first;
            if (s_axis_tlast) begin
                m_axis_tdata <= last_data;
                m_axis_tkeep <= spill ? {L{1'b1}} : last_keep;
                m_axis_tlast <= !spill;
                m_axis_tcrcw <= spill ? {WPB{1'b0}} : last_crcw;
                extra <= spill;
                extra_data <= spill_data;
                extra_keep <= spill_keep;
                extra_crcw <= spill_crcw;
            end else begin
                m_axis_tdata <= shifted[DATA_W-1:0];
                m_axis_tkeep <= {L{1'b1}};
                m_axis_tlast <= 1'b0;
                m_axis_tcrcw <= {WPB{1'b0}};
            end
        end
    end
    if (!take) begin
        c1_valid <= 1'b0;
    end
    c2_valid <= c1_valid;
    c2_lenm1 <= c1_len - 1'b1;
    c2_beats <= c1_beats;
    c2_top <= c1_top;
    if (c2_valid && c2_lenm1 != {c2_beats, c2_top}) begin
        err_valid <= 1'b1;
        err_code[1] <= 1'b1;
    end
    if (rst) begin
        c1_valid <= 1'b0;
        c2_valid <= 1'b0;
        in_frame <= 1'b0;
        dropping <= 1'b0;
        extra <= 1'b0;
        m_axis_tvalid <= 1'b0;
        err_valid <= 1'b0;
    end
end

endmodule

`resetall
