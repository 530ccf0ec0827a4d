foreach ($n in $names) { [System.Net.Dns]::GetHostAddresses($n) | ForEach-Object { 'pv-host ' + $_.IPAddressToString } }
