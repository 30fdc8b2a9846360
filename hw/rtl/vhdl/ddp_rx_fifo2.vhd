-- ddp_rx_fifo2: small first-word-fall-through FIFO in registers whose two
-- oldest words are both at the output, for ddp_rx's W beats when its write
-- port is twice the data width: one or two words in and one or two out per
-- clock. Holds 2 + 2**AW words of WIDTH bits.
--
-- VHDL-2008 twin of hw/rtl/ddp_rx_fifo2.v: same generics, same ports, same
-- registers and timing (the Verilog header has the details). In brief:
-- in_valid2 pushes in_data2 behind in_data (with in_valid); in_ready and
-- in_ready2 (one and two words free) are registers. out_data/out_valid is
-- the oldest word, out_data2/out_valid2 the next (registers); out_ready
-- takes the oldest, out_ready2 with it the second too. Every pushed word is
-- written to mem at wr; mem's slots follow the words' positions (the oldest
-- word's is hd), so hd moves with the pops alone. The Verilog picks the
-- count's flags by the steps last (for LUT depth); here they are worked
-- out from the new count, the same values.

library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

entity ddp_rx_fifo2 is
    generic (
        WIDTH : natural := 8;
        AW    : natural := 2
    );
    port (
        clk        : in  std_logic := '0';
        rst        : in  std_logic := '0';

        in_data    : in  std_logic_vector(WIDTH - 1 downto 0) := (others => '0');
        in_valid   : in  std_logic := '0';
        in_ready   : out std_logic := '1';
        in_data2   : in  std_logic_vector(WIDTH - 1 downto 0) := (others => '0');
        in_valid2  : in  std_logic := '0';
        in_ready2  : out std_logic := '1';

        out_data   : out std_logic_vector(WIDTH - 1 downto 0) := (others => '0');
        out_valid  : out std_logic := '0';
        out_ready  : in  std_logic := '0';
        out_data2  : out std_logic_vector(WIDTH - 1 downto 0) := (others => '0');
        out_valid2 : out std_logic := '0';
        out_ready2 : in  std_logic := '0'
    );
end entity ddp_rx_fifo2;

architecture rtl of ddp_rx_fifo2 is

    function check_generics return boolean is
    begin
        assert AW >= 2 and AW <= 8
            report "ddp_rx_fifo2: AW must be 2..8, got " & integer'image(AW)
            severity failure;
        return true;
    end function check_generics;

    constant GENERICS_OK_c : boolean := check_generics;

    constant DEPTH_c : positive := 2 ** AW;
    constant CW_c : positive := AW + 2;              -- a count 0 .. DEPTH + 2

    subtype word_t is std_ulogic_vector(WIDTH - 1 downto 0);
    subtype ptr_t is unsigned(AW - 1 downto 0);
    subtype cnt_t is unsigned(CW_c - 1 downto 0);
    type mem_t is array (0 to DEPTH_c - 1) of word_t;

    constant CAP_c : cnt_t := to_unsigned(DEPTH_c + 2, CW_c);

    signal mem : mem_t := (others => (others => '0'));
    signal head0_reg, head1_reg : word_t := (others => '0');
    signal wr_ptr_reg, hd_ptr_reg : ptr_t := (others => '0');
    signal count_reg : cnt_t := (others => '0');
    -- flags of the count: heads valid, words in mem (one, two), room
    signal h0_reg, h1_reg, m1_reg, m2_reg : std_ulogic := '0';
    signal room1_reg, room2_reg : std_ulogic := '1';

    signal push, push2, pop, pop2 : std_ulogic := '0';
    signal m0, m1, src0, src1, head0_next, head1_next : word_t := (others => '0');
    signal count_next : cnt_t := (others => '0');

    function u1(b : std_ulogic; w : natural) return unsigned is
        variable r : unsigned(w - 1 downto 0);
    begin
        r := (others => '0');
        r(0) := b;
        return r;
    end function u1;

begin

    push <= in_valid and room1_reg;
    push2 <= push and in_valid2 and room2_reg;
    pop <= out_ready and h0_reg;
    pop2 <= pop and out_ready2 and h1_reg;

    in_ready <= room1_reg;
    in_ready2 <= room2_reg;
    out_data <= head0_reg;
    out_valid <= h0_reg;
    out_data2 <= head1_reg;
    out_valid2 <= h1_reg;

    -- mem's two oldest words, then the input's, in queue order
    m0 <= mem(to_integer(hd_ptr_reg + 2));
    m1 <= mem(to_integer(hd_ptr_reg + 3));
    src0 <= m0 when m1_reg = '1' else std_ulogic_vector(in_data);
    src1 <= m1 when m2_reg = '1' else
            std_ulogic_vector(in_data) when m1_reg = '1' else
            std_ulogic_vector(in_data2);

    p_heads : process (all) is
    begin
        if pop = '0' then
            head0_next <= head0_reg when h0_reg = '1' else src0;
            if h1_reg = '1' then
                head1_next <= head1_reg;
            elsif h0_reg = '1' then
                head1_next <= src0;
            else
                head1_next <= src1;
            end if;
        elsif pop2 = '0' then
            head0_next <= head1_reg when h1_reg = '1' else src0;
            head1_next <= src0 when h1_reg = '1' else src1;
        else
            head0_next <= src0;
            head1_next <= src1;
        end if;
    end process p_heads;

    count_next <= count_reg + u1(push, CW_c) + u1(push2, CW_c) - u1(pop, CW_c) - u1(pop2, CW_c);

    p_reg : process (clk) is
    begin
        if rising_edge(clk) then
            if push = '1' then
                mem(to_integer(wr_ptr_reg)) <= std_ulogic_vector(in_data);
            end if;
            if push2 = '1' then
                mem(to_integer(wr_ptr_reg + 1)) <= std_ulogic_vector(in_data2);
            end if;
            head0_reg <= head0_next;
            head1_reg <= head1_next;
            wr_ptr_reg <= wr_ptr_reg + u1(push, AW) + u1(push2, AW);
            hd_ptr_reg <= hd_ptr_reg + u1(pop, AW) + u1(pop2, AW);
            count_reg <= count_next;
            h0_reg <= '1' when count_next /= 0 else '0';
            h1_reg <= '1' when count_next > 1 else '0';
            m1_reg <= '1' when count_next > 2 else '0';
            m2_reg <= '1' when count_next > 3 else '0';
            room1_reg <= '1' when count_next < CAP_c else '0';
            room2_reg <= '1' when count_next < CAP_c - 1 else '0';
            if rst = '1' then
                wr_ptr_reg <= (others => '0');
                hd_ptr_reg <= (others => '0');
                count_reg <= (others => '0');
                h0_reg <= '0';
                h1_reg <= '0';
                m1_reg <= '0';
                m2_reg <= '0';
                room1_reg <= '1';
                room2_reg <= '1';
            end if;
        end if;
    end process p_reg;

end architecture rtl;
