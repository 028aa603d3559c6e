"""Lab control: the audio lab, the LAN lab, relays, and the processes a call is made of."""
