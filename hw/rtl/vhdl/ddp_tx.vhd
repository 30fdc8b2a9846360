-- ddp_tx: transmit DDP/RDMAP header builder and MULPDU segmenter, DATA_W
-- bits per clock.
--
-- VHDL-2008 twin of hw/rtl/ddp_tx.v: same generics, same ports, same
-- registers and clock counts, so tests/ddp_tx/test_ddp_tx.py drives both
-- (the Verilog header has the interface and the pipeline in full). In
-- brief:
--
-- Turns RDMAP messages (a descriptor, and for most opcodes a payload frame)
-- into DDP Segments (ULPDUs), one AXI4-Stream frame each, octet for octet
-- the segments iwarp/rdmap's Message.AppendSegments writes: the DDP header
-- (RFC 5041 4.2 tagged, 14 octets, or 4.3 untagged, 18 octets) with the
-- RDMAP control octet in its first RsvdULP octet (RFC 5040), then the
-- segment's share of the payload. Every segment but a message's last
-- carries MULPDU minus the header octets of payload and has L=0; TO (tagged)
-- or MO (untagged) advances by the payload already sent; a zero-length
-- message is one segment, header only (RFC 5041 5.2; iwarp/ddp Segmenter).
-- MPA framing is the next block's business (mpa_tx).
--
-- Descriptor, s_desc (valid/ready, one per message; s_desc_ready
-- registered): opcode (RFC 5040: 0 RDMA Write, 1 Read Request, 2 Read
-- Response, 3 Send, 4 Send with Invalidate, 5 Send with SE, 6 Send with SE
-- and Invalidate, 7 Terminate); stag and to (Data Sink STag and TO of the
-- first octet, tagged messages); msn (untagged messages; the queue, QN 0
-- Send, 1 Read Request, 2 Terminate, follows from the opcode); inv_stag
-- (opcodes 4 and 6; must be zero on any other untagged message); len
-- (payload octets taken from s_axis, every opcode but the Read Request);
-- rr_* (the Read Request's 28-octet body, RFC 5040 4.4: sink STag, sink TO,
-- size, source STag, source TO); mulpdu (the largest segment, header
-- included); ctx (opaque, copied to every segment and error of the
-- message).
--
-- Payload, s_axis: one lane-0 aligned frame per message whose len is not
-- zero (none for zero-length messages and for Read Requests), in
-- descriptor order, every beat full but the last, len octets in all; tkeep
-- is not looked at. A Terminate's payload (Terminate header and what
-- follows it) comes from the frame too.
--
-- Output, m_axis: one frame per segment, lane-0 aligned, header first;
-- tkeep all ones but in the last beat (a run from lane 0); tuser = ctx &
-- ulpdu_len(15 downto 0) (the segment's octets, the MPA ULPDU_Length), the
-- same on every beat of the frame. All outputs are registered.
--
-- Errors: a descriptor the Go stack refuses (Message.Segments returns an
-- error) produces no segment; its payload frame, if any, is read and
-- dropped, and err_valid pulses for one clock with err_code and err_ctx, in
-- message order. The code is that of the first check Go's
-- Message.Segments fails, in Go's order:
--   1  opcode not one of the eight (rdmap: cannot send opcode)
--   2  inv_stag not zero on an untagged message other than opcodes 4 and 6
--   3  Terminate payload malformed (rdmap.ParseTerminate, RFC 5040 4.8:
--      length not what its M/D/R flags and DDP header's T bit announce,
--      layer above 2, R and D with a DDP header that is not a Read
--      Request's)
--   4  Read Request (46 octets) or Terminate (18 + len) longer than mulpdu
--   5  mulpdu leaves no room for payload after the 14/18-octet header
--   6  tagged message whose TO + len wraps the 64-bit TO
-- A Terminate's payload is checked when it reaches the head of the payload
-- buffer (checks 3 and 4 there, in that order), so a Terminate costs a few
-- idle clocks.
--
-- Throughput: one output beat per clock with back-to-back descriptors and
-- payload and an always-ready sink, including one single-beat segment per
-- clock. Latency: 11 clocks from the clock edge that accepts a descriptor
-- to the edge where its first beat can be taken, when the pipeline is
-- empty and the payload is there.
--
-- Pipeline (each stage the logic in front of its registers): d1 descriptor
-- skid buffer; d2, d3 checks, payload per segment P = mulpdu - header,
-- header template; sg segment generator, one segment per clock, remaining
-- octets R = hi * 2^18 + lo counted down by P; sp1..sp4 per segment: chunk
-- length, offset, TO + offset (16 bits per stage), segment length, beats,
-- line-up with the input beats, final header; bq a one-segment skid
-- buffer; bg beat generator (header beats, the beat where header and
-- payload meet, payload beats; the Terminate check; dropping refused
-- messages' frames; the error output); win the payload buffer, 4 beats in a
-- ring; x1 lo and hi merged lane by lane and rotated by the low 2 bits of
-- the rotation; out the rest of the rotation, header lanes laid over it.
-- The rotation is constant over a segment: (segment offset - header
-- length) mod N. Adders and comparators on the loops are written as trees
-- (fadd, gt33), as in the Verilog.
--
-- Verification: tests/ddp_tx/test_ddp_tx.py, every expected octet from
-- iwarp/rdmap through cmd/rnic-oracle (op rdmap_segments).

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;
use work.rnic_pkg.all;

entity ddp_tx is
    generic (
        DATA_W : natural := 64;
        CTX_W  : natural := 16
    );
    port (
        clk                 : in  std_logic := '0';
        rst                 : in  std_logic := '0';

        s_desc_valid        : in  std_logic := '0';
        s_desc_ready        : out std_logic;
        s_desc_opcode       : in  std_logic_vector(3 downto 0) := (others => '0');
        s_desc_stag         : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_to           : in  std_logic_vector(63 downto 0) := (others => '0');
        s_desc_msn          : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_inv_stag     : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_len          : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_sink_stag : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_sink_to   : in  std_logic_vector(63 downto 0) := (others => '0');
        s_desc_rr_size      : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_src_stag  : in  std_logic_vector(31 downto 0) := (others => '0');
        s_desc_rr_src_to    : in  std_logic_vector(63 downto 0) := (others => '0');
        s_desc_mulpdu       : in  std_logic_vector(15 downto 0) := (others => '0');
        s_desc_ctx          : in  std_logic_vector(CTX_W - 1 downto 0) := (others => '0');

        s_axis_tdata        : in  std_logic_vector(DATA_W - 1 downto 0) := (others => '0');
        s_axis_tkeep        : in  std_logic_vector(DATA_W / 8 - 1 downto 0) := (others => '0');
        s_axis_tvalid       : in  std_logic := '0';
        s_axis_tready       : out std_logic;
        s_axis_tlast        : in  std_logic := '0';

        m_axis_tdata        : out std_logic_vector(DATA_W - 1 downto 0);
        m_axis_tkeep        : out std_logic_vector(DATA_W / 8 - 1 downto 0);
        m_axis_tvalid       : out std_logic;
        m_axis_tready       : in  std_logic := '0';
        m_axis_tlast        : out std_logic;
        m_axis_tuser        : out std_logic_vector(CTX_W + 16 - 1 downto 0);

        err_valid           : out std_logic;
        err_code            : out std_logic_vector(3 downto 0);
        err_ctx             : out std_logic_vector(CTX_W - 1 downto 0)
    );
end entity ddp_tx;

architecture rtl of ddp_tx is

    function check_generics return boolean is
    begin
        assert DATA_W = 64 or DATA_W = 128 or DATA_W = 256 or DATA_W = 512
            report "ddp_tx: DATA_W must be 64, 128, 256 or 512, got "
                & integer'image(DATA_W)
            severity failure;
        assert CTX_W >= 1
            report "ddp_tx: CTX_W must be at least 1, got " & integer'image(CTX_W)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant KEEP_W_c : positive := DATA_W / 8;          -- octets per beat, N
    constant LG_c     : positive := clog2(KEEP_W_c);
    constant USER_W_c : positive := CTX_W + 16;
    constant CNT_W_c  : positive := 16 - LG_c;           -- beats of a segment, minus one

    subtype data_t is std_ulogic_vector(DATA_W - 1 downto 0);
    subtype keep_t is std_ulogic_vector(KEEP_W_c - 1 downto 0);
    subtype ctx_t is std_ulogic_vector(CTX_W - 1 downto 0);
    subtype user_t is std_ulogic_vector(USER_W_c - 1 downto 0);
    subtype cnt_t is unsigned(CNT_W_c - 1 downto 0);
    subtype lane_t is unsigned(LG_c - 1 downto 0);       -- a lane, 0 .. N - 1
    subtype nlanes_t is unsigned(LG_c downto 0);         -- a lane count, 0 .. N
    subtype hc_t is unsigned(1 downto 0);
    subtype u2_t is unsigned(1 downto 0);
    subtype u3_t is unsigned(2 downto 0);
    subtype u4_t is unsigned(3 downto 0);
    subtype u6_t is unsigned(5 downto 0);
    subtype u14_t is unsigned(13 downto 0);
    subtype u16_t is unsigned(15 downto 0);
    subtype u18_t is unsigned(17 downto 0);
    subtype u32_t is unsigned(31 downto 0);
    subtype u48_t is unsigned(47 downto 0);
    subtype u64_t is unsigned(63 downto 0);
    subtype w32_t is std_ulogic_vector(31 downto 0);
    subtype w64_t is std_ulogic_vector(63 downto 0);

    -- Header lengths: tagged, untagged, untagged with the Read Request body.
    constant HC_T_c : hc_t := "00";
    constant HC_U_c : hc_t := "01";
    constant HC_R_c : hc_t := "10";
    constant HL_T_c : natural := 14;
    constant HL_U_c : natural := 18;
    constant HL_R_c : natural := 46;
    constant HDR_N_c : natural := HL_R_c;                -- longest header, octets
    constant HDR_W_c : natural := 8 * HDR_N_c;
    constant HDR_LANES_c : natural := imin(KEEP_W_c, HDR_N_c);

    subtype hdr_t is std_ulogic_vector(HDR_W_c - 1 downto 0);

    -- Per header length: whole header beats before the beat where the
    -- header ends (I0), and the header octets in that beat (HM, never 0 as
    -- no header length is a multiple of N). MIL: the segment length up to
    -- which that beat is the last.
    constant I0_T_c : natural := HL_T_c / KEEP_W_c;
    constant I0_U_c : natural := HL_U_c / KEEP_W_c;
    constant I0_R_c : natural := HL_R_c / KEEP_W_c;
    constant HM_T_c : natural := HL_T_c mod KEEP_W_c;
    constant HM_U_c : natural := HL_U_c mod KEEP_W_c;
    constant HM_R_c : natural := HL_R_c mod KEEP_W_c;
    constant MIL_T_c : natural := (I0_T_c + 1) * KEEP_W_c;
    constant MIL_U_c : natural := (I0_U_c + 1) * KEEP_W_c;
    constant MIL_R_c : natural := (I0_R_c + 1) * KEEP_W_c;
    constant N_L_c : nlanes_t := to_unsigned(KEEP_W_c, LG_c + 1);   -- N, as a lane count

    -- RDMAP opcodes (RFC 5040) and error codes (see the header).
    constant OP_WRITE_c       : u4_t := x"0";
    constant OP_READ_REQ_c    : u4_t := x"1";
    constant OP_READ_RESP_c   : u4_t := x"2";
    constant OP_SEND_INV_c    : u4_t := x"4";
    constant OP_SEND_SE_INV_c : u4_t := x"6";
    constant OP_TERMINATE_c   : u4_t := x"7";
    constant ERR_NONE_c       : u4_t := x"0";
    constant ERR_OPCODE_c     : u4_t := x"1";
    constant ERR_INV_STAG_c   : u4_t := x"2";
    constant ERR_TERMINATE_c  : u4_t := x"3";
    constant ERR_NO_FIT_c     : u4_t := x"4";
    constant ERR_MULPDU_c     : u4_t := x"5";
    constant ERR_TO_WRAP_c    : u4_t := x"6";

    -- --- helpers ------------------------------------------------------------

    -- Big-endian fields (RFC 5041 4) in lane order: the most significant
    -- octet in the lowest lane.
    function be32(v : std_ulogic_vector(31 downto 0)) return w32_t is
    begin
        return v(7 downto 0) & v(15 downto 8) & v(23 downto 16) & v(31 downto 24);
    end function be32;

    function be64(v : std_ulogic_vector(63 downto 0)) return w64_t is
    begin
        return be32(v(31 downto 0)) & be32(v(63 downto 32));
    end function be64;

    -- Lanes at or above v.
    function lanes_from(v : lane_t) return keep_t is
        variable k : keep_t;
    begin
        for b in 0 to KEEP_W_c - 1 loop
            k(b) := to_sl(b >= to_integer(v));
        end loop;
        return k;
    end function lanes_from;

    -- Lanes below v, 1 <= v <= N.
    function lanes_below(v : nlanes_t) return keep_t is
        variable k : keep_t;
    begin
        for b in 0 to KEEP_W_c - 1 loop
            k(b) := to_sl(b < to_integer(v));
        end loop;
        return k;
    end function lanes_below;

    function hdr_len(hc : hc_t) return u6_t is
    begin
        case hc is
            when HC_T_c => return to_unsigned(HL_T_c, 6);
            when HC_U_c => return to_unsigned(HL_U_c, 6);
            when others => return to_unsigned(HL_R_c, 6);
        end case;
    end function hdr_len;

    function hdr_i0(hc : hc_t) return u3_t is
    begin
        case hc is
            when HC_T_c => return to_unsigned(I0_T_c, 3);
            when HC_U_c => return to_unsigned(I0_U_c, 3);
            when others => return to_unsigned(I0_R_c, 3);
        end case;
    end function hdr_i0;

    function hdr_hm(hc : hc_t) return lane_t is
    begin
        case hc is
            when HC_T_c => return to_unsigned(HM_T_c, LG_c);
            when HC_U_c => return to_unsigned(HM_U_c, LG_c);
            when others => return to_unsigned(HM_R_c, LG_c);
        end case;
    end function hdr_hm;

    -- term_ok(f, n): rdmap.ParseTerminate accepts the n-octet Terminate
    -- payload (RFC 5040 4.8) whose fields are f (see w0_tc): Terminate
    -- Control, then the DDP Segment Length if M, the offending DDP header if
    -- D (14 octets if its T bit is set, else 18), the Read Request header if
    -- R, and nothing after; a layer of at most 2 (LLP); and if R and D, a
    -- DDP header that is a Read Request's. Every field this needs is in the
    -- first 8 octets; a payload too short for a field it announces fails
    -- the length check whatever the missing octets would hold.
    function term_ok(f : std_ulogic_vector(16 downto 0); n : u6_t) return std_ulogic is
        variable m, d, r, t : std_ulogic;
        variable layer, op : u4_t;
        variable total : u6_t;
    begin
        layer := unsigned(f(16 downto 13));
        m := f(12);
        d := f(11);
        r := f(10);
        if m = '1' then                      -- T bit and RDMAP opcode of the DDP header
            t := f(4);
            op := unsigned(f(3 downto 0));
        else
            t := f(9);
            op := unsigned(f(8 downto 5));
        end if;
        total := to_unsigned(4, 6);
        if m = '1' then
            total := total + 2;
        end if;
        if d = '1' then
            if t = '1' then
                total := total + 14;
            else
                total := total + 18;
            end if;
        end if;
        if r = '1' then
            total := total + 28;
        end if;
        return to_sl(layer <= 2 and total = n
                     and not (r = '1' and d = '1' and (t = '1' or op /= OP_READ_REQ_c)));
    end function term_ok;

    -- --- control signals between the sections -------------------------------

    signal en_d    : std_ulogic := '0';   -- d1..d3 advance
    signal en_s    : std_ulogic := '0';   -- sg and sp1..sp4 advance
    signal sg_load : std_ulogic := '0';   -- sg takes the message in d3

    -- --- d1: descriptor skid buffer -------------------------------------------

    -- The descriptor packed as the Verilog packs it: opcode on top, ctx at
    -- the bottom; the offsets of its fields.
    constant DESC_W_c : natural := 4 + 32 + 64 + 32 + 32 + 32 + 32 + 64 + 32 + 32 + 64 + 16 + CTX_W;
    constant DO_MULPDU_c    : natural := CTX_W;
    constant DO_RR_SRC_TO_c : natural := DO_MULPDU_c + 16;
    constant DO_RR_SRC_ST_c : natural := DO_RR_SRC_TO_c + 64;
    constant DO_RR_SIZE_c   : natural := DO_RR_SRC_ST_c + 32;
    constant DO_RR_SINK_TO_c : natural := DO_RR_SIZE_c + 32;
    constant DO_RR_SINK_ST_c : natural := DO_RR_SINK_TO_c + 64;
    constant DO_LEN_c       : natural := DO_RR_SINK_ST_c + 32;
    constant DO_INV_c       : natural := DO_LEN_c + 32;
    constant DO_MSN_c       : natural := DO_INV_c + 32;
    constant DO_TO_c        : natural := DO_MSN_c + 32;
    constant DO_STAG_c      : natural := DO_TO_c + 64;
    constant DO_OP_c        : natural := DO_STAG_c + 32;

    subtype desc_t is std_ulogic_vector(DESC_W_c - 1 downto 0);

    signal s_desc : desc_t := (others => '0');

    signal s_desc_ready_reg : std_ulogic := '0';
    signal s_desc_ready_next : std_ulogic := '0';
    signal sk_valid_reg : std_ulogic := '0';
    signal sk_valid_next : std_ulogic := '0';
    signal sk_reg : desc_t := (others => '0');
    signal d1_valid_reg : std_ulogic := '0';
    signal d1_valid_next : std_ulogic := '0';
    signal d1_reg : desc_t := (others => '0');

    signal desc_acc, d1_load : std_ulogic := '0';

    signal d1_op : u4_t := (others => '0');
    signal d1_stag, d1_msn, d1_inv : w32_t := (others => '0');
    signal d1_len : u32_t := (others => '0');
    signal d1_to : u64_t := (others => '0');
    signal d1_rr_sink_stag, d1_rr_size, d1_rr_src_stag : w32_t := (others => '0');
    signal d1_rr_sink_to, d1_rr_src_to : w64_t := (others => '0');
    signal d1_mulpdu : u16_t := (others => '0');
    signal d1_ctx : ctx_t := (others => '0');

    -- --- d2: checks, P, header template ---------------------------------------

    signal d2_valid_reg : std_ulogic := '0';
    signal d2_tagged_reg, d2_rr_reg, d2_term_reg : std_ulogic := '0';
    signal d2_e_op_reg, d2_e_inv_reg, d2_e_term_reg : std_ulogic := '0';
    signal d2_rr_nofit_reg, d2_term_nofit_reg, d2_e_mulpdu_reg : std_ulogic := '0';
    signal d2_c16_reg, d2_gt_hi_reg, d2_eq_hi_reg : std_ulogic := '0';  -- carry of len + TO(31:0), in halves
    signal d2_to_hi_ones_reg, d2_to_47_ones_reg : std_ulogic := '0';
    signal d2_p_reg : u16_t := (others => '0');
    signal d2_len_reg : u32_t := (others => '0');
    signal d2_hi_m1_reg : u14_t := (others => '0');
    signal d2_to_reg : u64_t := (others => '0');
    signal d2_to_p1_lo_reg, d2_to_p1_hi_reg : u16_t := (others => '0');
    signal d2_tmpl_reg : hdr_t := (others => '0');
    signal d2_ctx_reg : ctx_t := (others => '0');

    signal d1_tagged, d1_rr, d1_term : std_ulogic := '0';
    signal d1_lm : u32_t := (others => '0');
    signal d1_tmpl : hdr_t := (others => '0');
    signal d1_p_y : u32_t := (others => '0');
    signal d1_p, d1_hi_m1, d1_to_p1_lo, d1_to_p1_hi : u33_t := (others => '0');

    -- --- d3: error code, first segment's "last" flag --------------------------

    signal d3_valid_reg : std_ulogic := '0';
    signal d3_hc_reg : hc_t := (others => '0');
    signal d3_err_reg : u4_t := (others => '0');
    signal d3_tchk_reg, d3_tfit_bad_reg, d3_frame_reg, d3_last_reg : std_ulogic := '0';
    signal d3_p_reg : u16_t := (others => '0');
    signal d3_len_reg : u32_t := (others => '0');
    signal d3_hi_m1_reg : u14_t := (others => '0');
    signal d3_to_reg : u64_t := (others => '0');
    signal d3_to_hi_p1_reg : u32_t := (others => '0');
    signal d3_tmpl_reg : hdr_t := (others => '0');
    signal d3_ctx_reg : ctx_t := (others => '0');

    signal d2_err : u4_t := (others => '0');
    signal d2_single : std_ulogic := '0';
    signal d2_to_wrap : std_ulogic := '0';

    -- --- sg: segment generator -------------------------------------------------

    signal sg_valid_reg : std_ulogic := '0';
    signal sg_last_reg : std_ulogic := '0';        -- the current segment is the message's last
    signal sg_lo_reg : u18_t := (others => '0');   -- remaining octets R = hi * 2^18 + lo
    signal sg_hi_reg : u14_t := (others => '0');
    signal sg_hi_m1_reg : u14_t := (others => '0'); -- hi - 1 (stale the clock after a borrow, unused then)
    signal sg_p_reg : u16_t := (others => '0');
    signal sg_hc_reg : hc_t := (others => '0');
    signal sg_err_reg : u4_t := (others => '0');
    signal sg_tchk_reg, sg_tfit_bad_reg, sg_frame_reg : std_ulogic := '0';
    signal sg_len_reg : u32_t := (others => '0');
    signal sg_to_reg : u64_t := (others => '0');
    signal sg_to_hi_p1_reg : u32_t := (others => '0');
    signal sg_tmpl_reg : hdr_t := (others => '0');
    signal sg_ctx_reg : ctx_t := (others => '0');

    signal sg_take : std_ulogic := '0';
    signal sg_lo_sub, sg_hi_dec : u33_t := (others => '0');
    signal sg_borrow, sg_last_next : std_ulogic := '0';

    -- --- sp1: chunk length, offset (low half) -----------------------------------

    signal sp1_valid_reg : std_ulogic := '0';
    signal sp1_last_reg : std_ulogic := '0';
    signal sp1_c_reg : u16_t := (others => '0');       -- payload octets of the segment
    signal sp1_off_lo_reg : u16_t := (others => '0');  -- offset of its first payload octet in the message
    signal sp1_off_c_reg : std_ulogic := '0';          -- ... and the carry of its low half
    signal sp1_rem_hi_reg : u16_t := (others => '0');  -- R(31:16)
    signal sp1_hc_reg : hc_t := (others => '0');
    signal sp1_err_reg : u4_t := (others => '0');
    signal sp1_tchk_reg, sp1_tfit_bad_reg, sp1_frame_reg : std_ulogic := '0';
    signal sp1_len_hi_reg : u16_t := (others => '0');
    signal sp1_len6_reg : u6_t := (others => '0');
    signal sp1_to_reg : u64_t := (others => '0');
    signal sp1_to_hi_p1_reg : u32_t := (others => '0');
    signal sp1_tmpl_reg : hdr_t := (others => '0');
    signal sp1_ctx_reg : ctx_t := (others => '0');

    signal sg_off_lo : u33_t := (others => '0');

    -- --- sp2: offset (high half), segment length, TO (low quarter) -------------

    signal sp2_valid_reg : std_ulogic := '0';
    signal sp2_last_reg : std_ulogic := '0';
    signal sp2_c_reg : u16_t := (others => '0');
    signal sp2_c_zero_reg : std_ulogic := '0';
    signal sp2_sl_reg : u16_t := (others => '0');      -- segment octets, header included
    signal sp2_off_lo_reg, sp2_off_hi_reg : u16_t := (others => '0');
    signal sp2_to_lo_reg : u16_t := (others => '0');   -- (TO + offset)(15:0)
    signal sp2_to_c_reg : std_ulogic := '0';
    signal sp2_hc_reg : hc_t := (others => '0');
    signal sp2_err_reg : u4_t := (others => '0');
    signal sp2_tchk_reg, sp2_tfit_bad_reg, sp2_frame_reg : std_ulogic := '0';
    signal sp2_len6_reg : u6_t := (others => '0');
    signal sp2_to_hi_reg : u48_t := (others => '0');   -- TO(63:16)
    signal sp2_to_hi_p1_reg : u32_t := (others => '0');
    signal sp2_tmpl_reg : hdr_t := (others => '0');
    signal sp2_ctx_reg : ctx_t := (others => '0');

    signal sp1_off_hi, sp1_sl, sp1_to_lo : u33_t := (others => '0');

    -- --- sp3: TO (second quarter), beats, line-up with the input beats ---------

    signal sp3_valid_reg : std_ulogic := '0';
    signal sp3_last_reg : std_ulogic := '0';
    signal sp3_c_zero_reg : std_ulogic := '0';
    signal sp3_end_reg : std_ulogic := '0';            -- the segment ends the message's payload
    signal sp3_sl_reg : u16_t := (others => '0');
    signal sp3_cnt_reg : cnt_t := (others => '0');     -- beats - 1
    signal sp3_mil_reg : std_ulogic := '0';            -- the beat where the header ends is the last
    signal sp3_lb_reg : lane_t := (others => '0');     -- octets in the last beat, mod N
    signal sp3_a_reg : lane_t := (others => '0');      -- offset mod N: lane of the first payload octet in lo
    signal sp3_rot_reg : lane_t := (others => '0');    -- (offset - header length) mod N
    signal sp3_pn_m_reg : lane_t := (others => '0');   -- payload octets in the beat where the header ends
    signal sp3_mo_reg : u32_t := (others => '0');
    signal sp3_to_lo_reg, sp3_to_mid_reg : u16_t := (others => '0');
    signal sp3_to_c_reg : std_ulogic := '0';
    signal sp3_hc_reg : hc_t := (others => '0');
    signal sp3_err_reg : u4_t := (others => '0');
    signal sp3_tchk_reg, sp3_tfit_bad_reg, sp3_frame_reg : std_ulogic := '0';
    signal sp3_len6_reg : u6_t := (others => '0');
    signal sp3_to_hi_reg : u32_t := (others => '0');
    signal sp3_to_hi_p1_reg : u32_t := (others => '0');
    signal sp3_tmpl_reg : hdr_t := (others => '0');
    signal sp3_ctx_reg : ctx_t := (others => '0');

    signal sp2_to_mid, sp2_sl_m1 : u33_t := (others => '0');
    signal sp2_a : lane_t := (others => '0');
    signal sp2_room_m : lane_t := (others => '0');   -- payload room in the beat where the header ends: N - HM
    signal sp2_pn_m : lane_t := (others => '0');
    signal sp2_mil : std_ulogic := '0';

    -- --- sp4: header, the beat plan (bg's input) ---------------------------------

    -- A segment as bg takes it, packed as the Verilog packs it (sp4, and the
    -- skid buffer bq after it): hc on top, user at the bottom; the offsets
    -- of its fields.
    constant RO_USER_c      : natural := 0;
    constant RO_POPS_L_c    : natural := RO_USER_c + USER_W_c;
    constant RO_POPS_M_c    : natural := RO_POPS_L_c + 2;
    constant RO_HI_MID_c    : natural := RO_POPS_M_c + 2;
    constant RO_HI_L_c      : natural := RO_HI_MID_c + 1;
    constant RO_HI_M_c      : natural := RO_HI_L_c + 1;
    constant RO_KEEP_LAST_c : natural := RO_HI_M_c + 1;
    constant RO_MASK_ROT_c  : natural := RO_KEEP_LAST_c + KEEP_W_c;
    constant RO_MASK_A_c    : natural := RO_MASK_ROT_c + KEEP_W_c;
    constant RO_ROT_c       : natural := RO_MASK_A_c + KEEP_W_c;
    constant RO_C_ZERO_c    : natural := RO_ROT_c + LG_c;
    constant RO_HDR_c       : natural := RO_C_ZERO_c + 1;
    constant RO_CNT_ZERO_c  : natural := RO_HDR_c + HDR_W_c;
    constant RO_CNT_c       : natural := RO_CNT_ZERO_c + 1;
    constant RO_LEN6_c      : natural := RO_CNT_c + CNT_W_c;
    constant RO_FRAME_c     : natural := RO_LEN6_c + 6;
    constant RO_TFIT_BAD_c  : natural := RO_FRAME_c + 1;
    constant RO_TCHK_c      : natural := RO_TFIT_BAD_c + 1;
    constant RO_ERR_NZ_c    : natural := RO_TCHK_c + 1;
    constant RO_ERR_c       : natural := RO_ERR_NZ_c + 1;
    constant RO_HC_c        : natural := RO_ERR_c + 4;
    constant REC_W_c : natural := 2 + 4 + 1 + 1 + 1 + 1 + 6 + CNT_W_c + 1 + HDR_W_c + 1 + LG_c
        + 3 * KEEP_W_c + 1 + 1 + 1 + 2 + 2 + USER_W_c;

    subtype rec_t is std_ulogic_vector(REC_W_c - 1 downto 0);

    signal sp4_valid_reg : std_ulogic := '0';
    signal sp4_rec_reg : rec_t := (others => '0');

    signal sp3_rec : rec_t := (others => '0');

    -- --- bq: skid buffer between sp4 and bg ---------------------------------------

    signal bq_valid_reg : std_ulogic := '0';
    signal bq_rec_reg : rec_t := (others => '0');

    signal bi_valid : std_ulogic := '0';
    signal bi_rec : rec_t := (others => '0');

    signal bi_hc : hc_t := (others => '0');
    signal bi_err : u4_t := (others => '0');
    signal bi_err_nz : std_ulogic := '0';
    signal bi_tchk, bi_tfit_bad, bi_frame : std_ulogic := '0';
    signal bi_len6 : u6_t := (others => '0');
    signal bi_cnt : cnt_t := (others => '0');
    signal bi_cnt_zero : std_ulogic := '0';
    signal bi_hdr : hdr_t := (others => '0');
    signal bi_c_zero : std_ulogic := '0';
    signal bi_rot : lane_t := (others => '0');
    signal bi_mask_a, bi_mask_rot, bi_keep_last : keep_t := (others => '0');
    signal bi_hi_m, bi_hi_l, bi_hi_mid : std_ulogic := '0';
    signal bi_pops_m, bi_pops_l : u2_t := (others => '0');
    signal bi_user : user_t := (others => '0');

    -- --- bg: beat generator, window, issue ----------------------------------------

    -- bg states: one flag each; none set is idle.
    signal bg_beat_reg : std_ulogic := '0';   -- issuing the segment's beats
    signal bg_drop_reg : std_ulogic := '0';   -- dropping a refused message's frame
    signal bg_tc1_reg : std_ulogic := '0';    -- Terminate: wait for its first beat
    signal bg_tc2_reg : std_ulogic := '0';    -- Terminate: check it
    signal bg_tc3_reg : std_ulogic := '0';    -- Terminate: act on the check
    signal bg_any_reg : std_ulogic := '0';    -- one of them

    -- The current beat.
    signal bg_in_hdr_reg : std_ulogic := '0';      -- all header
    signal bg_in_mix_reg : std_ulogic := '0';      -- the header ends in it
    signal bg_last_reg : std_ulogic := '0';        -- the segment's last
    signal bg_need_lo_reg : std_ulogic := '0';     -- it takes payload from lo
    signal bg_need_hi_reg : std_ulogic := '0';     -- ... and from hi
    signal bg_pops_reg : u2_t := (others => '0');  -- window beats it is done with
    signal bg_cnt_reg : cnt_t := (others => '0');  -- beats after it
    signal bg_hcnt_reg : u3_t := (others => '0');  -- all-header beats left, this one included
    signal bg_hsr_reg : hdr_t := (others => '0');  -- header octets not sent yet, from lane 0
    -- The current segment.
    signal bg_hc_reg : hc_t := (others => '0');
    signal bg_c_zero_reg : std_ulogic := '0';
    signal bg_rot_reg : lane_t := (others => '0');
    signal bg_mask_a_reg, bg_mask_rot_reg, bg_keep_last_reg : keep_t := (others => '0');
    signal bg_hi_m_reg, bg_hi_l_reg, bg_hi_mid_reg : std_ulogic := '0';
    signal bg_pops_m_reg, bg_pops_l_reg : u2_t := (others => '0');
    signal bg_user_reg : user_t := (others => '0');
    signal bg_len6_reg : u6_t := (others => '0');
    signal bg_tfit_bad_reg : std_ulogic := '0';
    signal bg_tc_fields_reg : std_ulogic_vector(16 downto 0) := (others => '0');
    signal bg_tc_ok_reg : std_ulogic := '0';

    signal err_valid_reg : std_ulogic := '0';
    signal err_code_reg : u4_t := (others => '0');
    signal err_ctx_reg : ctx_t := (others => '0');

    -- Payload window: 4 beats in a ring; win_t(i): more than i beats held.
    signal win0_reg, win1_reg, win2_reg, win3_reg : data_t := (others => '0');
    signal win_last_reg : std_ulogic_vector(3 downto 0) := (others => '0');
    signal win_wp_reg : u2_t := "00";
    signal win_rp_reg : u2_t := "00";
    signal win_rp1_reg : u2_t := "01";
    signal win_t_reg : std_ulogic_vector(3 downto 0) := (others => '0');
    signal s_axis_tready_reg : std_ulogic := '0';

    -- x1 and out stages.
    signal x1_valid_reg : std_ulogic := '0';
    signal x1_data_reg : data_t := (others => '0');
    signal x1_rot_hi_reg : unsigned(LG_c - 3 downto 0) := (others => '0');
    signal x1_hmask_reg : keep_t := (others => '0');
    signal x1_hdr_reg : std_ulogic_vector(8 * HDR_LANES_c - 1 downto 0) := (others => '0');
    signal x1_keep_reg : keep_t := (others => '0');
    signal x1_last_reg : std_ulogic := '0';
    signal x1_user_reg : user_t := (others => '0');

    signal out_valid_reg : std_ulogic := '0';
    signal out_data_reg : data_t := (others => '0');
    signal out_keep_reg : keep_t := (others => '0');
    signal out_last_reg : std_ulogic := '0';
    signal out_user_reg : user_t := (others => '0');

    signal adv : std_ulogic := '0';    -- bg, x1, out advance
    signal push : std_ulogic := '0';

    -- What term_ok needs of lo's first 8 octets.
    signal w0_tc : std_ulogic_vector(16 downto 0) := (others => '0');
    signal w0_last : std_ulogic := '0';  -- lo is a frame's last beat
    signal issue : std_ulogic := '0';    -- an output beat leaves bg
    signal drop_pop : std_ulogic := '0';
    signal popc : u2_t := (others => '0');           -- beats leaving the window
    signal bg_free : std_ulogic := '0';  -- bg is done: it takes bg's input segment, if any
    signal bg_sel_load : std_ulogic := '0';

    -- The next beat's plan.
    signal nb_in_hdr, nb_in_mix, nb_last, nb_need_lo, nb_need_hi : std_ulogic := '0';
    signal nb_pops : u2_t := (others => '0');
    signal nb_cnt : cnt_t := (others => '0');
    signal nb_hcnt : u3_t := (others => '0');
    signal nb_hsr : hdr_t := (others => '0');

    -- x1: merge and first rotation step; out: the rest, header lanes.
    signal x1_data_next : data_t := (others => '0');
    signal bg_hmask : keep_t := (others => '0');
    signal out_data_next : data_t := (others => '0');

    -- Window: pointers, and the count (thermometer).
    signal win_t_next : std_ulogic_vector(3 downto 0) := (others => '0');
    signal win_rp_next : u2_t := (others => '0');

begin

    -- --- d1: descriptor skid buffer -------------------------------------------

    s_desc <= s_desc_opcode & s_desc_stag & s_desc_to & s_desc_msn & s_desc_inv_stag & s_desc_len
              & s_desc_rr_sink_stag & s_desc_rr_sink_to & s_desc_rr_size & s_desc_rr_src_stag
              & s_desc_rr_src_to & s_desc_mulpdu & s_desc_ctx;

    s_desc_ready <= s_desc_ready_reg;

    desc_acc <= s_desc_valid and s_desc_ready_reg;
    d1_load <= en_d or not d1_valid_reg;

    p_d1 : process (all) is
        variable skv, d1v : std_ulogic;
    begin
        skv := sk_valid_reg;
        d1v := d1_valid_reg;
        if d1_load = '1' then
            -- A full skid buffer held s_desc_ready low: nothing new this clock.
            d1v := sk_valid_reg or desc_acc;
            skv := '0';
        elsif desc_acc = '1' then
            skv := '1';
        end if;
        sk_valid_next <= skv;
        d1_valid_next <= d1v;
        s_desc_ready_next <= not skv;
    end process p_d1;

    d1_op <= unsigned(d1_reg(DO_OP_c + 3 downto DO_OP_c));
    d1_stag <= d1_reg(DO_STAG_c + 31 downto DO_STAG_c);
    d1_to <= unsigned(d1_reg(DO_TO_c + 63 downto DO_TO_c));
    d1_msn <= d1_reg(DO_MSN_c + 31 downto DO_MSN_c);
    d1_inv <= d1_reg(DO_INV_c + 31 downto DO_INV_c);
    d1_len <= unsigned(d1_reg(DO_LEN_c + 31 downto DO_LEN_c));
    d1_rr_sink_stag <= d1_reg(DO_RR_SINK_ST_c + 31 downto DO_RR_SINK_ST_c);
    d1_rr_sink_to <= d1_reg(DO_RR_SINK_TO_c + 63 downto DO_RR_SINK_TO_c);
    d1_rr_size <= d1_reg(DO_RR_SIZE_c + 31 downto DO_RR_SIZE_c);
    d1_rr_src_stag <= d1_reg(DO_RR_SRC_ST_c + 31 downto DO_RR_SRC_ST_c);
    d1_rr_src_to <= d1_reg(DO_RR_SRC_TO_c + 63 downto DO_RR_SRC_TO_c);
    d1_mulpdu <= unsigned(d1_reg(DO_MULPDU_c + 15 downto DO_MULPDU_c));
    d1_ctx <= d1_reg(CTX_W - 1 downto 0);

    -- --- d2: checks, P, header template ---------------------------------------

    d1_p_y <= x"0000FFF2" when d1_tagged = '1' else x"0000FFEE";
    d1_p <= fadd(d1_mulpdu, d1_p_y, '0');
    -- hi - 1 of a Read Request (whose payload octets are 0, not len) is unused.
    d1_hi_m1 <= fadd(d1_len(31 downto 18), x"00003FFF", '0');
    d1_to_p1_lo <= fadd(d1_to(47 downto 32), x"00000000", '1');
    d1_to_p1_hi <= fadd(d1_to(63 downto 48), x"00000000", '1');

    p_d1_tmpl : process (all) is
        variable tagged, rr, term : std_ulogic;
        variable qn : w32_t;
        variable t : hdr_t;
    begin
        tagged := to_sl(d1_op = OP_WRITE_c or d1_op = OP_READ_RESP_c);
        rr := to_sl(d1_op = OP_READ_REQ_c);
        term := to_sl(d1_op = OP_TERMINATE_c);
        d1_tagged <= tagged;
        d1_rr <= rr;
        d1_term <= term;
        if rr = '1' then                    -- payload octets in the frame
            d1_lm <= (others => '0');
        else
            d1_lm <= d1_len;
        end if;
        if rr = '1' then
            qn := x"00000001";
        elsif term = '1' then
            qn := x"00000002";
        else
            qn := x"00000000";
        end if;
        -- Header octets in lane order; the L bit, TO and MO are filled in
        -- per segment (sp4). Control octet: T, L, Rsvd 0, DV 1 (RFC 5041
        -- 4.1); then RDMAP's: RV 1, opcode (RFC 5040).
        t := (others => '0');
        t(7 downto 0) := tagged & "0000001";
        t(15 downto 8) := "0100" & std_ulogic_vector(d1_op);
        if tagged = '1' then
            t(8 * 2 + 31 downto 8 * 2) := be32(d1_stag);
        else
            t(8 * 2 + 31 downto 8 * 2) := be32(d1_inv);      -- RsvdULP[8:39]
            t(8 * 6 + 31 downto 8 * 6) := be32(qn);
            t(8 * 10 + 31 downto 8 * 10) := be32(d1_msn);
            if rr = '1' then                                -- RFC 5040 4.4
                t(8 * 18 + 31 downto 8 * 18) := be32(d1_rr_sink_stag);
                t(8 * 22 + 63 downto 8 * 22) := be64(d1_rr_sink_to);
                t(8 * 30 + 31 downto 8 * 30) := be32(d1_rr_size);
                t(8 * 34 + 31 downto 8 * 34) := be32(d1_rr_src_stag);
                t(8 * 38 + 63 downto 8 * 38) := be64(d1_rr_src_to);
            end if;
        end if;
        d1_tmpl <= t;
    end process p_d1_tmpl;

    -- --- d3: error code, first segment's "last" flag --------------------------

    p_d2 : process (all) is
        variable wrap : std_ulogic;
    begin
        wrap := d2_tagged_reg and d2_to_hi_ones_reg
                and (d2_gt_hi_reg or (d2_eq_hi_reg and d2_c16_reg));
        d2_to_wrap <= wrap;
        -- Go's order (Message.Segments): Header (opcode, Invalidate STag),
        -- Read Request / Terminate format, their fit, then NewSegmenter
        -- (MULPDU, TO wrap). A well-sized Terminate's format and fit are
        -- checked when its payload is there (bg).
        if d2_e_op_reg = '1' then
            d2_err <= ERR_OPCODE_c;
        elsif d2_e_inv_reg = '1' then
            d2_err <= ERR_INV_STAG_c;
        elsif d2_e_term_reg = '1' then
            d2_err <= ERR_TERMINATE_c;
        elsif d2_rr_reg = '1' and d2_rr_nofit_reg = '1' then
            d2_err <= ERR_NO_FIT_c;
        elsif d2_term_reg = '0' and d2_e_mulpdu_reg = '1' then
            d2_err <= ERR_MULPDU_c;
        elsif wrap = '1' then
            d2_err <= ERR_TO_WRAP_c;
        else
            d2_err <= ERR_NONE_c;
        end if;
        -- One segment, whatever P says.
        d2_single <= d2_rr_reg or d2_term_reg or d2_e_op_reg or d2_e_inv_reg or d2_e_mulpdu_reg
                     or wrap;
    end process p_d2;

    -- --- sg: segment generator -------------------------------------------------

    sg_take <= (not sg_valid_reg) or sg_last_reg;   -- sg takes d3's message when it advances
    sg_load <= en_s and sg_take;
    en_d <= (not d3_valid_reg) or sg_load;

    -- lo - P, and whether it borrows from hi. A borrow leaves lo >= 2^18 - P
    -- > P, so two borrows never come in a row, and hi - 1 can be recomputed
    -- from hi every clock.
    sg_lo_sub <= fadd(sg_lo_reg, unsigned'("11") & not sg_p_reg, '1');
    sg_borrow <= not sg_lo_sub(18);
    sg_hi_dec <= fadd(sg_hi_reg, x"00003FFF", '0');
    -- The next segment is the last if R - P <= P.
    sg_last_next <= to_sl(sg_hi_reg = 0) and not gt33(sg_lo_reg, sg_p_reg & '0');

    -- --- sp1: chunk length, offset (low half) -----------------------------------

    sg_off_lo <= fadd(sg_len_reg(15 downto 0), not sg_lo_reg(15 downto 0), '1');

    -- --- sp2: offset (high half), segment length, TO (low quarter) -------------

    sp1_off_hi <= fadd(sp1_len_hi_reg, not sp1_rem_hi_reg, sp1_off_c_reg);
    sp1_sl <= fadd(sp1_c_reg, hdr_len(sp1_hc_reg), '0');
    sp1_to_lo <= fadd(sp1_to_reg(15 downto 0), sp1_off_lo_reg, '0');

    -- --- sp3: TO (second quarter), beats, line-up with the input beats ---------

    sp2_to_mid <= fadd(sp2_to_hi_reg(15 downto 0), sp2_off_hi_reg, sp2_to_c_reg);
    sp2_sl_m1 <= fadd(sp2_sl_reg, x"0000FFFF", '0');

    p_sp2 : process (all) is
        variable room : lane_t;
    begin
        sp2_a <= sp2_off_lo_reg(LG_c - 1 downto 0);
        -- N - HM, in LG bits (N itself is 0 there).
        room := resize(N_L_c, LG_c) - hdr_hm(sp2_hc_reg);
        sp2_room_m <= room;
        if sp2_c_reg < room then
            sp2_pn_m <= sp2_c_reg(LG_c - 1 downto 0);
        else
            sp2_pn_m <= room;
        end if;
        case sp2_hc_reg is
            when HC_T_c => sp2_mil <= to_sl(sp2_sl_reg <= MIL_T_c);
            when HC_U_c => sp2_mil <= to_sl(sp2_sl_reg <= MIL_U_c);
            when others => sp2_mil <= to_sl(sp2_sl_reg <= MIL_R_c);
        end case;
    end process p_sp2;

    -- --- sp4: header, the beat plan (bg's input) ---------------------------------

    p_sp3 : process (all) is
        variable hdr : hdr_t;
        variable to64 : u64_t;
        variable sum_m, pn_l, sum_l : nlanes_t;
        variable hi_m, hi_l : std_ulogic;
        variable pops_m, pops_l : u2_t;
    begin
        if sp3_to_c_reg = '1' then
            to64 := sp3_to_hi_p1_reg & sp3_to_mid_reg & sp3_to_lo_reg;
        else
            to64 := sp3_to_hi_reg & sp3_to_mid_reg & sp3_to_lo_reg;
        end if;
        hdr := sp3_tmpl_reg;
        hdr(6) := sp3_last_reg;                                      -- L
        if sp3_hc_reg = HC_T_c then
            hdr(8 * 6 + 63 downto 8 * 6) := be64(std_ulogic_vector(to64));          -- TO
        else
            hdr(8 * 14 + 31 downto 8 * 14) := be32(std_ulogic_vector(sp3_mo_reg));  -- MO
        end if;
        -- The beat where the header ends takes pn_m payload octets from lane
        -- a of lo on: it needs hi if they run past lo, and is done with lo if
        -- they reach its end. Payload beats start at lane rot; the last has
        -- pn_l octets. The beat that ends the message's payload drops lo
        -- and, if it used it, hi.
        sum_m := ('0' & sp3_a_reg) + ('0' & sp3_pn_m_reg);
        hi_m := to_sl(sum_m > N_L_c);
        if sp3_lb_reg = 0 then
            pn_l := N_L_c;
        else
            pn_l := '0' & sp3_lb_reg;
        end if;
        sum_l := ('0' & sp3_rot_reg) + pn_l;
        hi_l := to_sl(sum_l > N_L_c);
        if sp3_end_reg = '1' and sp3_mil_reg = '1' then
            if hi_m = '1' then
                pops_m := "10";
            else
                pops_m := "01";
            end if;
        else
            pops_m := '0' & to_sl(sum_m >= N_L_c);
        end if;
        if sp3_end_reg = '1' then
            if hi_l = '1' then
                pops_l := "10";
            else
                pops_l := "01";
            end if;
        else
            pops_l := '0' & to_sl(sum_l >= N_L_c);
        end if;
        sp3_rec <= std_ulogic_vector(sp3_hc_reg) & std_ulogic_vector(sp3_err_reg)
            & to_sl(sp3_err_reg /= ERR_NONE_c) & sp3_tchk_reg & sp3_tfit_bad_reg & sp3_frame_reg
            & std_ulogic_vector(sp3_len6_reg)
            & std_ulogic_vector(sp3_cnt_reg) & to_sl(sp3_cnt_reg = 0) & hdr & sp3_c_zero_reg
            & std_ulogic_vector(sp3_rot_reg)
            & lanes_from(sp3_a_reg) & lanes_from(sp3_rot_reg) & lanes_below(pn_l)
            & hi_m & hi_l & to_sl(sp3_rot_reg /= 0) & std_ulogic_vector(pops_m)
            & std_ulogic_vector(pops_l)
            & sp3_ctx_reg & std_ulogic_vector(sp3_sl_reg);
    end process p_sp3;

    -- --- bq: skid buffer between sp4 and bg ---------------------------------------

    -- sp4's segment waits here when bg does not take it, so that sg..sp4
    -- advance on a register (en_s = not bq_valid) rather than on bg's
    -- decision.
    en_s <= not bq_valid_reg;

    bi_valid <= bq_valid_reg or sp4_valid_reg;   -- bg's input: bq first
    bi_rec <= bq_rec_reg when bq_valid_reg = '1' else sp4_rec_reg;

    bi_hc <= unsigned(bi_rec(RO_HC_c + 1 downto RO_HC_c));
    bi_err <= unsigned(bi_rec(RO_ERR_c + 3 downto RO_ERR_c));
    bi_err_nz <= bi_rec(RO_ERR_NZ_c);
    bi_tchk <= bi_rec(RO_TCHK_c);
    bi_tfit_bad <= bi_rec(RO_TFIT_BAD_c);
    bi_frame <= bi_rec(RO_FRAME_c);
    bi_len6 <= unsigned(bi_rec(RO_LEN6_c + 5 downto RO_LEN6_c));
    bi_cnt <= unsigned(bi_rec(RO_CNT_c + CNT_W_c - 1 downto RO_CNT_c));
    bi_cnt_zero <= bi_rec(RO_CNT_ZERO_c);
    bi_hdr <= bi_rec(RO_HDR_c + HDR_W_c - 1 downto RO_HDR_c);
    bi_c_zero <= bi_rec(RO_C_ZERO_c);
    bi_rot <= unsigned(bi_rec(RO_ROT_c + LG_c - 1 downto RO_ROT_c));
    bi_mask_a <= bi_rec(RO_MASK_A_c + KEEP_W_c - 1 downto RO_MASK_A_c);
    bi_mask_rot <= bi_rec(RO_MASK_ROT_c + KEEP_W_c - 1 downto RO_MASK_ROT_c);
    bi_keep_last <= bi_rec(RO_KEEP_LAST_c + KEEP_W_c - 1 downto RO_KEEP_LAST_c);
    bi_hi_m <= bi_rec(RO_HI_M_c);
    bi_hi_l <= bi_rec(RO_HI_L_c);
    bi_hi_mid <= bi_rec(RO_HI_MID_c);
    bi_pops_m <= unsigned(bi_rec(RO_POPS_M_c + 1 downto RO_POPS_M_c));
    bi_pops_l <= unsigned(bi_rec(RO_POPS_L_c + 1 downto RO_POPS_L_c));
    bi_user <= bi_rec(RO_USER_c + USER_W_c - 1 downto RO_USER_c);

    -- --- bg: beat generator, window, issue ----------------------------------------

    err_valid <= err_valid_reg;
    err_code <= std_ulogic_vector(err_code_reg);
    err_ctx <= err_ctx_reg;

    s_axis_tready <= s_axis_tready_reg;

    m_axis_tvalid <= out_valid_reg;
    m_axis_tdata <= out_data_reg;
    m_axis_tkeep <= out_keep_reg;
    m_axis_tlast <= out_last_reg;
    m_axis_tuser <= out_user_reg;

    adv <= (not out_valid_reg) or m_axis_tready;
    push <= s_axis_tvalid and s_axis_tready_reg;

    p_issue : process (all) is
        variable lo64 : w64_t;     -- lo (the beat holding the next payload octet), first 8 octets
        variable last : std_ulogic;
        variable iss, dp : std_ulogic;
    begin
        case win_rp_reg is
            when "00" => lo64 := win0_reg(63 downto 0);
            when "01" => lo64 := win1_reg(63 downto 0);
            when "10" => lo64 := win2_reg(63 downto 0);
            when others => lo64 := win3_reg(63 downto 0);
        end case;
        -- A Terminate payload's Layer (octet 0), M, D and R flags (octet 2),
        -- and the T bit and RDMAP opcode of a DDP header after the Terminate
        -- Control (octets 4, 5) or after the DDP Segment Length (6, 7).
        w0_tc <= lo64(7 downto 4) & lo64(23 downto 21) & lo64(39) & lo64(43 downto 40) & lo64(55)
                 & lo64(59 downto 56);
        last := win_last_reg(to_integer(win_rp_reg));
        w0_last <= last;

        iss := bg_beat_reg and adv and ((not bg_need_lo_reg) or win_t_reg(0))
               and ((not bg_need_hi_reg) or win_t_reg(1));
        dp := bg_drop_reg and win_t_reg(0);
        issue <= iss;
        drop_pop <= dp;
        if iss = '1' then
            popc <= bg_pops_reg;
        else
            popc <= '0' & dp;
        end if;
        bg_free <= (not bg_any_reg) or (iss and bg_last_reg) or (dp and last);
        -- The beat registers load the next segment when bg is done with one
        -- (bg_free), else step to the next beat (issue); which of the two is
        -- known from registers alone.
        bg_sel_load <= (not bg_beat_reg) or bg_last_reg;
    end process p_issue;

    -- The next beat's plan: the first of a segment (from bg's input) or the
    -- one after the current beat.
    p_nb : process (all) is
        variable mix_next, last_next, in_mix : std_ulogic;
        variable hcnt : u3_t;
    begin
        mix_next := bg_in_hdr_reg and to_sl(bg_hcnt_reg = 1);
        last_next := to_sl(bg_cnt_reg = 1);
        if bg_sel_load = '1' then
            hcnt := hdr_i0(bi_hc);
            in_mix := to_sl(hcnt = 0);
            nb_hcnt <= hcnt;
            nb_in_mix <= in_mix;
            nb_in_hdr <= not in_mix;
            nb_cnt <= bi_cnt;
            nb_last <= bi_cnt_zero;
            nb_hsr <= bi_hdr;
            nb_need_lo <= in_mix and not bi_c_zero;
            nb_need_hi <= in_mix and bi_hi_m;
            if in_mix = '1' then
                nb_pops <= bi_pops_m;
            else
                nb_pops <= "00";
            end if;
        else
            nb_hcnt <= bg_hcnt_reg - 1;
            nb_in_mix <= mix_next;
            nb_in_hdr <= bg_in_hdr_reg and not mix_next;
            nb_cnt <= bg_cnt_reg - 1;
            nb_last <= last_next;
            if bg_in_hdr_reg = '1' then
                nb_hsr <= std_ulogic_vector(shift_right(unsigned(bg_hsr_reg), DATA_W));
                nb_need_lo <= mix_next and not bg_c_zero_reg;
                nb_need_hi <= mix_next and bg_hi_m_reg;
                if mix_next = '1' then
                    nb_pops <= bg_pops_m_reg;
                else
                    nb_pops <= "00";
                end if;
            else
                nb_hsr <= bg_hsr_reg;
                nb_need_lo <= '1';
                if last_next = '1' then
                    nb_need_hi <= bg_hi_l_reg;
                    nb_pops <= bg_pops_l_reg;
                else
                    nb_need_hi <= bg_hi_mid_reg;
                    nb_pops <= "01";
                end if;
            end if;
        end if;
    end process p_nb;

    -- x1: merge lo and hi, first rotation step.
    p_x1 : process (all) is
        variable mask : keep_t;
        variable sel : u2_t;
        variable merged : data_t;
        variable hm : keep_t;
    begin
        if bg_in_mix_reg = '1' then
            mask := bg_mask_a_reg;
        else
            mask := bg_mask_rot_reg;
        end if;
        for b in 0 to KEEP_W_c - 1 loop
            if mask(b) = '1' then
                sel := win_rp_reg;
            else
                sel := win_rp1_reg;
            end if;
            case sel is
                when "00" => merged(8 * b + 7 downto 8 * b) := win0_reg(8 * b + 7 downto 8 * b);
                when "01" => merged(8 * b + 7 downto 8 * b) := win1_reg(8 * b + 7 downto 8 * b);
                when "10" => merged(8 * b + 7 downto 8 * b) := win2_reg(8 * b + 7 downto 8 * b);
                when others => merged(8 * b + 7 downto 8 * b) := win3_reg(8 * b + 7 downto 8 * b);
            end case;
        end loop;
        -- (merged & merged) >> 8 * rot(1:0), the low DATA_W bits.
        x1_data_next <= std_ulogic_vector(rotate_right(unsigned(merged),
                                                       8 * to_integer(bg_rot_reg(1 downto 0))));
        case bg_hc_reg is
            when HC_T_c => hm := lanes_below(to_unsigned(HM_T_c, LG_c + 1));
            when HC_U_c => hm := lanes_below(to_unsigned(HM_U_c, LG_c + 1));
            when others => hm := lanes_below(to_unsigned(HM_R_c, LG_c + 1));
        end case;
        if bg_in_hdr_reg = '1' then
            hm := (others => '1');
        elsif bg_in_mix_reg = '0' then
            hm := (others => '0');
        end if;
        bg_hmask <= hm;
    end process p_x1;

    -- out: rest of the rotation, header lanes.
    p_out : process (all) is
        variable d : data_t;
    begin
        -- (x1_data & x1_data) >> 32 * rot_hi, the low DATA_W bits.
        d := std_ulogic_vector(rotate_right(unsigned(x1_data_reg), 32 * to_integer(x1_rot_hi_reg)));
        for b in 0 to HDR_LANES_c - 1 loop
            if x1_hmask_reg(b) = '1' then
                d(8 * b + 7 downto 8 * b) := x1_hdr_reg(8 * b + 7 downto 8 * b);
            end if;
        end loop;
        out_data_next <= d;
    end process p_out;

    -- Window: pointers, and the count (thermometer) moved by push - popc.
    p_win : process (all) is
    begin
        win_rp_next <= win_rp_reg + popc;
        if push = '1' and popc = 0 then
            win_t_next <= win_t_reg(2 downto 0) & '1';
        elsif (push = '0' and popc = 1) or (push = '1' and popc = 2) then
            win_t_next <= '0' & win_t_reg(3 downto 1);
        elsif push = '0' and popc = 2 then
            win_t_next <= "00" & win_t_reg(3 downto 2);
        else
            win_t_next <= win_t_reg;
        end if;
    end process p_win;

    -- --- registers --------------------------------------------------------------

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            -- d1
            s_desc_ready_reg <= s_desc_ready_next;
            sk_valid_reg <= sk_valid_next;
            d1_valid_reg <= d1_valid_next;
            if d1_load = '0' and desc_acc = '1' then
                sk_reg <= s_desc;
            end if;
            if d1_load = '1' then
                if sk_valid_reg = '1' then
                    d1_reg <= sk_reg;
                else
                    d1_reg <= s_desc;
                end if;
            end if;

            -- d2, d3
            if en_d = '1' then
                d2_valid_reg <= d1_valid_reg;
                d2_tagged_reg <= d1_tagged;
                d2_rr_reg <= d1_rr;
                d2_term_reg <= d1_term;
                d2_e_op_reg <= d1_op(3);
                d2_e_inv_reg <= (not d1_tagged) and to_sl(d1_op /= OP_SEND_INV_c
                    and d1_op /= OP_SEND_SE_INV_c and unsigned(d1_inv) /= 0);
                d2_e_term_reg <= d1_term and to_sl(d1_len < 4 or d1_len > 52);
                d2_rr_nofit_reg <= to_sl(d1_mulpdu < HL_R_c);
                d2_term_nofit_reg <= to_sl(d1_mulpdu < ('0' & d1_len(5 downto 0)) + HL_U_c);
                if d1_tagged = '1' then
                    d2_e_mulpdu_reg <= to_sl(d1_mulpdu <= HL_T_c);
                else
                    d2_e_mulpdu_reg <= to_sl(d1_mulpdu <= HL_U_c);
                end if;
                d2_c16_reg <= gt33(d1_len(15 downto 0), not d1_to(15 downto 0));
                d2_gt_hi_reg <= gt33(d1_len(31 downto 16), not d1_to(31 downto 16));
                d2_eq_hi_reg <= to_sl(d1_len(31 downto 16) = not d1_to(31 downto 16));
                d2_to_hi_ones_reg <= to_sl(d1_to(63 downto 32) = x"FFFFFFFF");
                d2_to_47_ones_reg <= to_sl(d1_to(47 downto 32) = x"FFFF");
                d2_p_reg <= d1_p(15 downto 0);
                d2_len_reg <= d1_lm;
                d2_hi_m1_reg <= d1_hi_m1(13 downto 0);
                d2_to_reg <= d1_to;
                d2_to_p1_lo_reg <= d1_to_p1_lo(15 downto 0);
                d2_to_p1_hi_reg <= d1_to_p1_hi(15 downto 0);
                d2_tmpl_reg <= d1_tmpl;
                d2_ctx_reg <= d1_ctx;

                d3_valid_reg <= d2_valid_reg;
                if d2_rr_reg = '1' then
                    d3_hc_reg <= HC_R_c;
                elsif d2_tagged_reg = '1' then
                    d3_hc_reg <= HC_T_c;
                else
                    d3_hc_reg <= HC_U_c;
                end if;
                d3_err_reg <= d2_err;
                d3_tchk_reg <= d2_term_reg and not d2_e_inv_reg and not d2_e_term_reg;
                d3_tfit_bad_reg <= d2_term_nofit_reg;
                d3_frame_reg <= to_sl(d2_len_reg /= 0);
                d3_last_reg <= d2_single
                    or (to_sl(d2_len_reg(31 downto 16) = 0) and not gt33(d2_len_reg(15 downto 0), d2_p_reg));
                d3_p_reg <= d2_p_reg;
                d3_len_reg <= d2_len_reg;
                d3_hi_m1_reg <= d2_hi_m1_reg;
                d3_to_reg <= d2_to_reg;
                if d2_to_47_ones_reg = '1' then
                    d3_to_hi_p1_reg <= d2_to_p1_hi_reg & d2_to_p1_lo_reg;
                else
                    d3_to_hi_p1_reg <= d2_to_reg(63 downto 48) & d2_to_p1_lo_reg;
                end if;
                d3_tmpl_reg <= d2_tmpl_reg;
                d3_ctx_reg <= d2_ctx_reg;
            end if;

            -- sg
            if en_s = '1' and sg_take = '1' then
                sg_valid_reg <= d3_valid_reg;
                sg_last_reg <= d3_last_reg;
                sg_lo_reg <= d3_len_reg(17 downto 0);
                sg_hi_reg <= d3_len_reg(31 downto 18);
                sg_hi_m1_reg <= d3_hi_m1_reg;
                sg_p_reg <= d3_p_reg;
                sg_hc_reg <= d3_hc_reg;
                sg_err_reg <= d3_err_reg;
                sg_tchk_reg <= d3_tchk_reg;
                sg_tfit_bad_reg <= d3_tfit_bad_reg;
                sg_frame_reg <= d3_frame_reg;
                sg_len_reg <= d3_len_reg;
                sg_to_reg <= d3_to_reg;
                sg_to_hi_p1_reg <= d3_to_hi_p1_reg;
                sg_tmpl_reg <= d3_tmpl_reg;
                sg_ctx_reg <= d3_ctx_reg;
            elsif en_s = '1' then
                -- (sg_take is a register: the load/next choice is not behind en_s.)
                sg_last_reg <= sg_last_next;
                sg_lo_reg <= sg_lo_sub(17 downto 0);
                if sg_borrow = '1' then
                    sg_hi_reg <= sg_hi_m1_reg;
                end if;
                sg_hi_m1_reg <= sg_hi_dec(13 downto 0);
            end if;

            if en_s = '1' then
                -- sp1
                sp1_valid_reg <= sg_valid_reg;
                sp1_last_reg <= sg_last_reg;
                if sg_last_reg = '1' then
                    sp1_c_reg <= sg_lo_reg(15 downto 0);
                else
                    sp1_c_reg <= sg_p_reg;
                end if;
                sp1_off_lo_reg <= sg_off_lo(15 downto 0);
                sp1_off_c_reg <= sg_off_lo(16);
                sp1_rem_hi_reg <= sg_hi_reg & sg_lo_reg(17 downto 16);
                sp1_hc_reg <= sg_hc_reg;
                sp1_err_reg <= sg_err_reg;
                sp1_tchk_reg <= sg_tchk_reg;
                sp1_tfit_bad_reg <= sg_tfit_bad_reg;
                sp1_frame_reg <= sg_frame_reg;
                sp1_len_hi_reg <= sg_len_reg(31 downto 16);
                sp1_len6_reg <= sg_len_reg(5 downto 0);
                sp1_to_reg <= sg_to_reg;
                sp1_to_hi_p1_reg <= sg_to_hi_p1_reg;
                sp1_tmpl_reg <= sg_tmpl_reg;
                sp1_ctx_reg <= sg_ctx_reg;

                -- sp2
                sp2_valid_reg <= sp1_valid_reg;
                sp2_last_reg <= sp1_last_reg;
                sp2_c_reg <= sp1_c_reg;
                sp2_c_zero_reg <= to_sl(sp1_c_reg = 0);
                sp2_sl_reg <= sp1_sl(15 downto 0);
                sp2_off_lo_reg <= sp1_off_lo_reg;
                sp2_off_hi_reg <= sp1_off_hi(15 downto 0);
                sp2_to_lo_reg <= sp1_to_lo(15 downto 0);
                sp2_to_c_reg <= sp1_to_lo(16);
                sp2_hc_reg <= sp1_hc_reg;
                sp2_err_reg <= sp1_err_reg;
                sp2_tchk_reg <= sp1_tchk_reg;
                sp2_tfit_bad_reg <= sp1_tfit_bad_reg;
                sp2_frame_reg <= sp1_frame_reg;
                sp2_len6_reg <= sp1_len6_reg;
                sp2_to_hi_reg <= sp1_to_reg(63 downto 16);
                sp2_to_hi_p1_reg <= sp1_to_hi_p1_reg;
                sp2_tmpl_reg <= sp1_tmpl_reg;
                sp2_ctx_reg <= sp1_ctx_reg;

                -- sp3
                sp3_valid_reg <= sp2_valid_reg;
                sp3_last_reg <= sp2_last_reg;
                sp3_c_zero_reg <= sp2_c_zero_reg;
                sp3_end_reg <= sp2_last_reg and not sp2_c_zero_reg;
                sp3_sl_reg <= sp2_sl_reg;
                sp3_cnt_reg <= sp2_sl_m1(15 downto LG_c);
                sp3_mil_reg <= sp2_mil;
                sp3_lb_reg <= sp2_sl_reg(LG_c - 1 downto 0);
                sp3_a_reg <= sp2_a;
                sp3_rot_reg <= sp2_a - hdr_hm(sp2_hc_reg);
                sp3_pn_m_reg <= sp2_pn_m;
                sp3_mo_reg <= sp2_off_hi_reg & sp2_off_lo_reg;
                sp3_to_lo_reg <= sp2_to_lo_reg;
                sp3_to_mid_reg <= sp2_to_mid(15 downto 0);
                sp3_to_c_reg <= sp2_to_mid(16);
                sp3_hc_reg <= sp2_hc_reg;
                sp3_err_reg <= sp2_err_reg;
                sp3_tchk_reg <= sp2_tchk_reg;
                sp3_tfit_bad_reg <= sp2_tfit_bad_reg;
                sp3_frame_reg <= sp2_frame_reg;
                sp3_len6_reg <= sp2_len6_reg;
                sp3_to_hi_reg <= sp2_to_hi_reg(47 downto 16);
                sp3_to_hi_p1_reg <= sp2_to_hi_p1_reg;
                sp3_tmpl_reg <= sp2_tmpl_reg;
                sp3_ctx_reg <= sp2_ctx_reg;

                -- sp4
                sp4_valid_reg <= sp3_valid_reg;
                sp4_rec_reg <= sp3_rec;
            end if;

            -- bq
            if bq_valid_reg = '1' then
                bq_valid_reg <= not bg_free;
            else
                bq_valid_reg <= sp4_valid_reg and not bg_free;
                bq_rec_reg <= sp4_rec_reg;
            end if;

            -- bg
            err_valid_reg <= '0';
            if bg_free = '1' or issue = '1' then
                bg_in_hdr_reg <= nb_in_hdr;
                bg_in_mix_reg <= nb_in_mix;
                bg_last_reg <= nb_last;
                bg_need_lo_reg <= nb_need_lo;
                bg_need_hi_reg <= nb_need_hi;
                bg_pops_reg <= nb_pops;
                bg_cnt_reg <= nb_cnt;
                bg_hcnt_reg <= nb_hcnt;
                bg_hsr_reg <= nb_hsr;
            end if;
            if bg_free = '1' then
                bg_beat_reg <= '0';
                bg_drop_reg <= '0';
                bg_tc1_reg <= '0';
                bg_tc2_reg <= '0';
                bg_tc3_reg <= '0';
                bg_any_reg <= '0';
                if bi_valid = '1' then
                    bg_beat_reg <= (not bi_err_nz) and not bi_tchk;
                    bg_drop_reg <= bi_err_nz and bi_frame;
                    bg_tc1_reg <= (not bi_err_nz) and bi_tchk;
                    bg_any_reg <= (not bi_err_nz) or bi_frame;
                    err_valid_reg <= bi_err_nz;
                    err_code_reg <= bi_err;
                    err_ctx_reg <= bi_user(USER_W_c - 1 downto 16);
                end if;
                bg_hc_reg <= bi_hc;
                bg_c_zero_reg <= bi_c_zero;
                bg_rot_reg <= bi_rot;
                bg_mask_a_reg <= bi_mask_a;
                bg_mask_rot_reg <= bi_mask_rot;
                bg_keep_last_reg <= bi_keep_last;
                bg_hi_m_reg <= bi_hi_m;
                bg_hi_l_reg <= bi_hi_l;
                bg_hi_mid_reg <= bi_hi_mid;
                bg_pops_m_reg <= bi_pops_m;
                bg_pops_l_reg <= bi_pops_l;
                bg_user_reg <= bi_user;
                bg_len6_reg <= bi_len6;
                bg_tfit_bad_reg <= bi_tfit_bad;
            else
                if bg_tc1_reg = '1' and win_t_reg(0) = '1' then
                    bg_tc_fields_reg <= w0_tc;
                    bg_tc1_reg <= '0';
                    bg_tc2_reg <= '1';
                end if;
                if bg_tc2_reg = '1' then
                    bg_tc_ok_reg <= term_ok(bg_tc_fields_reg, bg_len6_reg);
                    bg_tc2_reg <= '0';
                    bg_tc3_reg <= '1';
                end if;
                if bg_tc3_reg = '1' then
                    bg_tc3_reg <= '0';
                    if bg_tc_ok_reg = '0' or bg_tfit_bad_reg = '1' then
                        bg_drop_reg <= '1';
                        err_valid_reg <= '1';
                        if bg_tc_ok_reg = '1' then
                            err_code_reg <= ERR_NO_FIT_c;
                        else
                            err_code_reg <= ERR_TERMINATE_c;
                        end if;
                        err_ctx_reg <= bg_user_reg(USER_W_c - 1 downto 16);
                    else
                        bg_beat_reg <= '1';
                    end if;
                end if;
            end if;

            -- window
            if push = '1' then
                case win_wp_reg is
                    when "00" => win0_reg <= s_axis_tdata;
                    when "01" => win1_reg <= s_axis_tdata;
                    when "10" => win2_reg <= s_axis_tdata;
                    when others => win3_reg <= s_axis_tdata;
                end case;
                win_last_reg(to_integer(win_wp_reg)) <= s_axis_tlast;
                win_wp_reg <= win_wp_reg + 1;
            end if;
            win_rp_reg <= win_rp_next;
            win_rp1_reg <= win_rp_next + 1;
            win_t_reg <= win_t_next;
            s_axis_tready_reg <= not win_t_next(3);

            -- x1, out
            if adv = '1' then
                x1_valid_reg <= issue;
                x1_data_reg <= x1_data_next;
                x1_rot_hi_reg <= bg_rot_reg(LG_c - 1 downto 2);
                x1_hmask_reg <= bg_hmask;
                x1_hdr_reg <= bg_hsr_reg(8 * HDR_LANES_c - 1 downto 0);
                if bg_last_reg = '1' then
                    x1_keep_reg <= bg_keep_last_reg;
                else
                    x1_keep_reg <= (others => '1');
                end if;
                x1_last_reg <= bg_last_reg;
                x1_user_reg <= bg_user_reg;

                out_valid_reg <= x1_valid_reg;
                out_data_reg <= out_data_next;
                out_keep_reg <= x1_keep_reg;
                out_last_reg <= x1_last_reg;
                out_user_reg <= x1_user_reg;
            end if;

            if rst = '1' then
                s_desc_ready_reg <= '0';
                sk_valid_reg <= '0';
                d1_valid_reg <= '0';
                d2_valid_reg <= '0';
                d3_valid_reg <= '0';
                sg_valid_reg <= '0';
                sp1_valid_reg <= '0';
                sp2_valid_reg <= '0';
                sp3_valid_reg <= '0';
                sp4_valid_reg <= '0';
                bq_valid_reg <= '0';
                bg_beat_reg <= '0';
                bg_drop_reg <= '0';
                bg_tc1_reg <= '0';
                bg_tc2_reg <= '0';
                bg_tc3_reg <= '0';
                bg_any_reg <= '0';
                err_valid_reg <= '0';
                win_wp_reg <= "00";
                win_rp_reg <= "00";
                win_rp1_reg <= "01";
                win_t_reg <= (others => '0');
                s_axis_tready_reg <= '0';
                x1_valid_reg <= '0';
                out_valid_reg <= '0';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
