print("intercom")
